// multidoc-store-stress: commits to one store forever, for the crash-safety tests.
//
//   multidoc-store-stress <sqlite|json> <path> <rollback|wal> [pause-µs] [text]
//
// Every commit increments a counter and writes it into two places (an attribute and the
// applied table) in one transaction, and logs "ready" once the first commit is done. The
// tests kill it with SIGKILL at random moments and check that both places always agree.
// With `text`, each commit also appends one character to a text through its sequence (the
// store appends the operation) and the store's housekeeping runs after every commit, so kills
// land in appends and in compactions alike; the text's length is the counter.
// With a pause it waits that long between commits, as a real second process of the device does
// (without one, a SQLite rollback-journal writer in a tight loop can starve another process
// past its busy timeout: see Docs/STORAGE.md).
import Foundation
import Model
import Storage
import Text

let arguments = CommandLine.arguments
guard (4...6).contains(arguments.count), let kind = StoreKind(rawValue: arguments[1]), let journal = JournalMode(rawValue: arguments[3]),
      let pause = arguments.count >= 5 ? UInt32(arguments[4]) : 0, arguments.count < 6 || arguments[5] == "text" else {
    FileHandle.standardError.write(Data("usage: multidoc-store-stress <sqlite|json> <path> <rollback|wal> [pause-µs] [text]\n".utf8))
    exit(64)
}
let appendsText = arguments.count == 6
let agent = Agent(high: 5, low: 1)
let url = URL(fileURLWithPath: arguments[2])
let device = DeviceID(UUID(uuidString: "5ed5ed00-0000-4000-8000-000000000001") ?? UUID())
do {
    let store = try StoreProvider.standard(options: StoreOptions(journalMode: journal)).open(kind, at: url, create: true)
    var announced = false
    while true {
        try store.write { contents in
            let next = (contents.sync.applied[device] ?? 0) + 1
            contents.sync.applied[device] = next
            contents.graph.objects[ObjectID("counter")] = ObjectRecord(entity: "Counter", attributes: ["value": .int(Int64(next))])
            contents.graph.objects[ObjectID("row-\(next % 50)")] = ObjectRecord(entity: "Row", attributes: ["n": .int(Int64(next))])
            guard appendsText else { return }
            let text = ObjectID("text")
            var scratch = contents.sync.texts[text]?["text"] ?? TextSequence()
            let operation = try scratch.insert("\(next % 10)", at: scratch.count, by: agent)
            _ = contents.applyText([operation], object: text, attribute: "text") { TextSequence() }
            let visible = contents.sync.texts[text]?["text"]?.text ?? ""
            contents.graph.objects[text] = ObjectRecord(entity: Entity.textEntry, attributes: ["text": .string(visible)])
        }
        if appendsText { store.checkpointIfDue() }
        if !announced {
            print("ready")
            fflush(nil)
            announced = true
        }
        if pause > 0 { usleep(pause) }
    }
} catch {
    FileHandle.standardError.write(Data("multidoc-store-stress: \(error)\n".utf8))
    exit(1)
}
