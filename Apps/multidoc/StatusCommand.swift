import AppSupport
import ArgumentParser
import Engine
import Foundation
import Model
import Sync

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The device's daemon and container status.")
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await runCommand {
            let (setup, library) = try options.bootstrap()
            // What is waiting in the container first, as every command that reads state does.
            let documents = try await library.closing { library in
                var report = try await syncPass(library, json: options.json, .refresh(nil))
                // Saves stuck behind a slot another copy of this root took: a command's pass does
                // not ship them, so it would not say so.
                for problem in await library.stuckSaves() where !report.problems.contains(problem) { report.problems.append(problem) }
                reportSync(report, json: options.json)
                return await library.documentCount()
            }
            let daemon = DaemonStatusText.running(setup.root)
            let available = setup.container.map { Container(root: $0).isAvailable }
            if options.json {
                var object: [String: Any] = ["root": setup.root.url.path, "documents": documents, "device": setup.identity.name]
                object["container"] = setup.container?.path
                object["containerAvailable"] = available
                // `daemon`: `running`, and the daemon's status file when one runs (Docs/DAEMON.md).
                object["daemon"] = (daemon ?? [:]).merging(["running": daemon != nil]) { _, running in running }
                let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
                print(String(decoding: data, as: UTF8.self))
                return
            }
            print("device:    \(setup.identity.name) (\(setup.identity.model)) \(setup.identity.id)")
            print("root:      \(setup.root.url.path)")
            print("container: \(setup.container?.path ?? "none") \(available.map { $0 ? "(available)" : "(unavailable)" } ?? "")")
            print("documents: \(documents)")
            guard let daemon else {
                print("daemon:    not running (start it with: multidocd\(options.root.map { " --root '\($0)'" } ?? "") &)")
                return
            }
            for line in DaemonStatusText.lines(daemon, now: Date()) { print(line) }
        }
    }
}
