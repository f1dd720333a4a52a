// multidoc-storage-bench: how fast the stores commit, against raw SQLite in the same run.
//
//   swift run -c release multidoc-storage-bench [--commits N] [--batch N] [--json]
//
// Single-change commits are durable (fsync) transactions of one attribute update each; batch
// apply is N inserts in one transaction; raw SQLite inserts the same rows with plain SQL in one
// transaction through GRDB, as the reference for what the disk and SQLite can do.
import Foundation
import GRDB
import Model
import Storage

struct Row: Encodable {
    var backend: String
    var commitsPerSecond: Double
    var batchChangesPerSecond: Double
}

var commits = 300
var batch = 10_000
var asJSON = false
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--commits": commits = Int(arguments.next() ?? "") ?? commits
    case "--batch": batch = Int(arguments.next() ?? "") ?? batch
    case "--json": asJSON = true
    case "-h", "--help":
        print("usage: multidoc-storage-bench [--commits N] [--batch N] [--json]")
        exit(0)
    default:
        FileHandle.standardError.write(Data("multidoc-storage-bench: unknown argument \(argument)\n".utf8))
        exit(64)
    }
}

func progress(_ text: String) { FileHandle.standardError.write(Data("\(text)\n".utf8)) }

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    try body()
    let elapsed = clock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("multidoc-storage-bench-\(getpid())")
try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }

var rows: [Row] = []
do {
    for (label, kind, journal) in [("json", StoreKind.json, JournalMode.rollback), ("sqlite-rollback", .sqlite, .rollback), ("sqlite-wal", .sqlite, .wal)] {
        progress("measuring \(label) …")
        let provider = StoreProvider.standard(options: StoreOptions(journalMode: journal))
        let store = try provider.open(kind, at: folder.appendingPathComponent("\(label)-commits.\(kind.fileName)"), create: true)
        try store.write { $0.graph.objects[ObjectID("t")] = ObjectRecord(entity: Entity.textEntry, attributes: ["text": .string("")]) }
        let commitTime = try seconds {
            for index in 0..<commits {
                try store.write { $0.graph.objects[ObjectID("t")]?.attributes["text"] = .string("edit \(index)") }
            }
        }
        store.close()
        let batchStore = try provider.open(kind, at: folder.appendingPathComponent("\(label)-batch.\(kind.fileName)"), create: true)
        let batchTime = try seconds {
            try batchStore.write { contents in
                for index in 0..<batch {
                    contents.graph.objects[ObjectID("o\(index)")] = ObjectRecord(entity: "Row", attributes: ["n": .int(Int64(index)), "text": .string("row \(index)")])
                }
            }
        }
        batchStore.close()
        rows.append(Row(backend: label, commitsPerSecond: Double(commits) / commitTime, batchChangesPerSecond: Double(batch) / batchTime))
    }
    progress("measuring raw SQLite …")
    var configuration = Configuration()
    configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA journal_mode = DELETE; PRAGMA synchronous = FULL") }
    let queue = try DatabaseQueue(path: folder.appendingPathComponent("raw.sqlite").path, configuration: configuration)
    try queue.write { db in
        try db.execute(sql: "CREATE TABLE attributes (object_id TEXT, name TEXT, value TEXT, PRIMARY KEY (object_id, name))")
        try db.execute(sql: "INSERT INTO attributes VALUES ('t', 'text', '')")
    }
    let rawCommits = try seconds {
        for index in 0..<commits {
            try queue.write { db in try db.execute(sql: "UPDATE attributes SET value = ? WHERE object_id = 't'", arguments: ["edit \(index)"]) }
        }
    }
    let rawBatch = try seconds {
        try queue.write { db in
            let statement = try db.makeStatement(sql: "INSERT INTO attributes VALUES (?, ?, ?)")
            for index in 0..<batch {
                try statement.execute(arguments: ["o\(index)", "n", "\(index)"])
                try statement.execute(arguments: ["o\(index)", "text", "row \(index)"])
            }
        }
    }
    try queue.close()
    rows.append(Row(backend: "raw SQLite (reference)", commitsPerSecond: Double(commits) / rawCommits, batchChangesPerSecond: Double(batch) / rawBatch))
} catch {
    FileHandle.standardError.write(Data("multidoc-storage-bench: \(error)\n".utf8))
    exit(1)
}

if asJSON {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    if let data = try? encoder.encode(rows) { print(String(decoding: data, as: UTF8.self)) }
} else {
    print("backend                   commits/s   batch changes/s   (\(commits) single-change commits; \(batch) inserts in one transaction)")
    for row in rows {
        print(row.backend.padding(toLength: 24, withPad: " ", startingAt: 0),
              String(format: "%10.0f", row.commitsPerSecond), String(format: "%17.0f", row.batchChangesPerSecond))
    }
}
