import AppSupport
import ArgumentParser
import Engine
import Foundation
import Model
import Storage

struct Convert: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Move a document's local store to the other backend.",
        discussion: "multidoc convert DOC --store json (or --to json). The document keeps its UUID, contents and sync state.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "A name, UUID or unique UUID prefix.") var document: String
    @Option(name: .customLong("to"), help: "The backend: sqlite or json (the same as --store here).") var target: String?

    func run() async throws {
        try await runCommand {
            let kind = try StoreKind.typed(target ?? options.device.store)
            let record = try await options.withLibrary { library in
                let record = try await library.resolve(document)
                try await library.convert(record.id, to: kind)
                return record
            }
            if options.json { try printJSON(["converted": record.id.description, "store": kind.rawValue]) } else { print("converted \(record.name) to \(kind)") }
        }
    }
}

struct MoveToCloud: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "move-to-cloud", abstract: "Make a local document ubiquitous (peers can build it whole).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "A name, UUID or unique UUID prefix.") var document: String

    func run() async throws {
        try await runCommand {
            let (record, moved) = try await options.withLibrary { library in
                let record = try await library.resolve(document)
                let moved = try await library.moveToCloud(record.id)
                reportSync(try await syncPass(library, json: options.json, .document(moved)), json: options.json)
                return (record, moved)
            }
            if options.json {
                try printJSON(["moved": record.id.description, "uuid": moved.description, "location": "cloud"])
            } else {
                print("\(record.name) is in the cloud" + (moved == record.id ? "" : " as a new document \(moved) (its old UUID was deleted from the cloud)"))
            }
        }
    }
}

struct MoveToLocal: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "move-to-local",
        abstract: "Make a cloud document local: --remove-cloud (peers drop it) or --keep-cloud (the local copy becomes a separate document).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "A name, UUID or unique UUID prefix.") var document: String
    @Flag(name: .customLong("keep-cloud"), help: "Keep the cloud copy; the local copy becomes a separate document.") var keepCloud = false
    @Flag(name: .customLong("remove-cloud"), help: "Remove it from the cloud; peers drop it.") var removeCloud = false

    func validate() throws {
        if keepCloud == removeCloud { throw ValidationError("choose one of --keep-cloud or --remove-cloud") }
    }

    func run() async throws {
        try await runCommand {
            let (record, local) = try await options.withLibrary { library in
                reportSync(try await syncPass(library, json: options.json, .refresh(nil)), json: options.json)
                let record = try await library.resolve(document)
                return (record, try await library.moveToLocal(record.id, choice: keepCloud ? .keepCloud : .removeCloud))
            }
            if options.json {
                try printJSON(["moved": record.id.description, "uuid": local.description, "location": "local"])
            } else {
                print("\(record.name) is local (\(local))")
            }
        }
    }
}
