import Foundation
import MultidocKit

// Two devices on one shared folder; an edit on A reaches B. Usage: SyncADocument [FOLDER]
let folder = URL(fileURLWithPath: CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory() + "multidoc-example-\(getpid())")
let shared = folder.appendingPathComponent("shared")
try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
let a = try await MultidocDevice.open(root: folder.appendingPathComponent("A"), container: shared, settings: ["DeviceName": "A"])
let b = try await MultidocDevice.open(root: folder.appendingPathComponent("B"), container: shared, settings: ["DeviceName": "B"])
let notes = try await a.create(named: "Notes")
try await a.insert("hello from A. ", at: 0, in: notes.id)
_ = await b.syncNow()
print("B reads: \(try await b.text(notes.id))")

await a.close()
await b.close()
