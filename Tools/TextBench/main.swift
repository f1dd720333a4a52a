// multidoc-text-bench: how fast the replicated text (Modules/Text) replays real editing traces.
//
//   swift build -c release --product multidoc-text-bench
//   .build/release/multidoc-text-bench [--traces DIR] [--runs N] [--json]
//
// Traces come from ../shared/traces next to the package root (github.com/josephg/editing-traces,
// CC BY 4.0). Sequential traces are typed into an empty text by one agent, in memory; the
// concurrent trace is replayed with one replica per agent, then all its operations are merged
// into a fresh replica. Each figure is the best of --runs runs.
import Foundation
import Text

struct Row: Encodable {
    var id: String
    var value: Double
    var unit: String
    var note: String
}

var runs = 5
var asJSON = false
var tracesFolder = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("shared/traces")
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--runs": runs = max(1, Int(arguments.next() ?? "") ?? runs)
    case "--traces": tracesFolder = URL(fileURLWithPath: arguments.next() ?? tracesFolder.path)
    case "--json": asJSON = true
    case "-h", "--help":
        print("usage: multidoc-text-bench [--traces DIR] [--runs N] [--json]")
        exit(0)
    default:
        FileHandle.standardError.write(Data("multidoc-text-bench: unknown argument \(argument)\n".utf8))
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

/// The best time of `runs` runs of `body`.
@MainActor func best(_ body: () throws -> Void) rethrows -> Double {
    var result = Double.infinity
    for _ in 0..<runs { result = min(result, try seconds(body)) }
    return result
}

enum BenchError: Error, CustomStringConvertible {
    case mismatch(String)
    var description: String {
        switch self {
        case .mismatch(let what): "\(what) does not end at the trace's endContent"
        }
    }
}

@MainActor func loadTrace(_ name: String) throws -> EditingTrace {
    try EditingTrace.load(tracesFolder.appendingPathComponent(name))
}

let agentA = Agent(high: 0x0123_4567_89AB_CDEF, low: 1)

var rows: [Row] = []

@MainActor func sequential(_ name: String, id: String) throws {
    progress("sequential \(name) …")
    let trace = try loadTrace("sequential/\(name).json.gz")
    let patches = trace.transactions.flatMap(\.patches)
    var final = TextSequence()
    var operations: [TextOperation] = []
    let local = try best {
        var text = TextSequence()
        var made: [TextOperation] = []
        made.reserveCapacity(patches.count)
        if !trace.startContent.isEmpty { made.append(try text.insert(trace.startContent, at: 0, by: agentA)) }
        for patch in patches { made += try EditingTrace.apply(patch, to: &text, by: agentA) }
        final = text
        operations = made
    }
    guard final.text == trace.endContent else { throw BenchError.mismatch(name) }
    var merged = TextSequence()
    let remote = try best {
        var text = TextSequence()
        for operation in operations { try text.apply(operation) }
        merged = text
    }
    guard merged.text == trace.endContent else { throw BenchError.mismatch("\(name) merged") }
    var snapshot: [UInt8] = []
    let encode = best { snapshot = final.encoded }
    let decode = try best { _ = try TextSequence(decoding: snapshot) }
    guard try TextSequence(decoding: snapshot).text == trace.endContent else { throw BenchError.mismatch("\(name) decoded") }
    let format1 = final.encodedFormat1
    let decodeFormat1 = try best { _ = try TextSequence(decoding: format1) }
    let insertedScalars = patches.reduce(0) { $0 + $1.insert.count }
    let coalesced = TextOperation.coalesced(operations)
    var fromCoalesced = TextSequence()
    for operation in coalesced { try fromCoalesced.apply(operation) }
    guard fromCoalesced.text == trace.endContent else { throw BenchError.mismatch("\(name) coalesced") }
    let operationBytes = operations.reduce(0) { $0 + $1.encoded.count }
    rows += [
        Row(id: "\(id).local.seconds", value: local, unit: "s", note: "\(patches.count) edits typed into an empty text"),
        Row(id: "\(id).local.ns-per-edit", value: local / Double(patches.count) * 1e9, unit: "ns", note: "per edit"),
        Row(id: "\(id).remote.seconds", value: remote, unit: "s", note: "its \(operations.count) operations applied to a fresh replica"),
        Row(id: "\(id).state.estimated-bytes", value: Double(final.estimatedByteSize), unit: "B", note: "\(final.runCount) runs incl. tombstones"),
        Row(id: "\(id).operations.count", value: Double(operations.count), unit: "ops", note: "\(insertedScalars) scalars inserted"),
        Row(id: "\(id).operations.coalesced-count", value: Double(coalesced.count), unit: "ops", note: "consecutive runs folded"),
        Row(id: "\(id).operations.bytes", value: Double(operationBytes), unit: "B", note: "all operations encoded"),
        Row(id: "\(id).snapshot.bytes", value: Double(snapshot.count), unit: "B", note: "state encoded, tombstones without their text"),
        Row(id: "\(id).snapshot.encode-seconds", value: encode, unit: "s", note: ""),
        Row(id: "\(id).snapshot.decode-seconds", value: decode, unit: "s", note: ""),
        Row(id: "\(id).snapshot-format1.bytes", value: Double(format1.count), unit: "B", note: "snapshot format 1: tombstones with their text"),
        Row(id: "\(id).snapshot-format1.decode-seconds", value: decodeFormat1, unit: "s", note: ""),
    ]
}

@MainActor func concurrent(_ name: String, id: String) throws {
    progress("concurrent \(name) …")
    let trace = try loadTrace("concurrent/\(name).json.gz")
    let events = trace.transactions.count
    var result: (texts: [String], operations: [[TextOperation]]) = ([], [])
    let replay = try best { result = try trace.replayConcurrently() }
    guard result.texts.allSatisfy({ $0 == trace.endContent }) else { throw BenchError.mismatch(name) }
    let operations = result.operations.flatMap { $0 }
    var merged = TextSequence()
    let merge = try best {
        var text = TextSequence()
        for operation in operations { try text.apply(operation) }
        merged = text
    }
    guard merged.text == trace.endContent else { throw BenchError.mismatch("\(name) merged") }
    var snapshot: [UInt8] = []
    let encode = best { snapshot = merged.encoded }
    let decode = try best { _ = try TextSequence(decoding: snapshot) }
    guard try TextSequence(decoding: snapshot).text == trace.endContent else { throw BenchError.mismatch("\(name) decoded") }
    rows += [
        Row(id: "\(id).snapshot.bytes", value: Double(snapshot.count), unit: "B", note: "merged state encoded, tombstones without their text"),
        Row(id: "\(id).snapshot.encode-seconds", value: encode, unit: "s", note: ""),
        Row(id: "\(id).snapshot.decode-seconds", value: decode, unit: "s", note: ""),
        Row(id: "\(id).merge.ns-per-event", value: merge / Double(events) * 1e9, unit: "ns",
            note: "\(operations.count) operations of \(events) events merged into a fresh replica"),
        Row(id: "\(id).merge.seconds", value: merge, unit: "s", note: ""),
        Row(id: "\(id).replay.ns-per-event", value: replay / Double(events) * 1e9, unit: "ns",
            note: "one replica per agent, each event after exactly its parents"),
        Row(id: "\(id).state.estimated-bytes", value: Double(merged.estimatedByteSize), unit: "B", note: "\(merged.runCount) runs"),
    ]
}

do {
    try sequential("automerge-paper", id: "automerge-paper")
    try sequential("rustcode", id: "rustcode")
    try sequential("sveltecomponent", id: "sveltecomponent")
    try concurrent("friendsforever", id: "friendsforever")
} catch {
    FileHandle.standardError.write(Data("multidoc-text-bench: \(error)\n".utf8))
    exit(1)
}

if asJSON {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    if let data = try? encoder.encode(rows) { print(String(decoding: data, as: UTF8.self)) }
} else {
    for row in rows {
        let value = row.value >= 1000 ? String(Int(row.value.rounded())) : String(format: "%.4f", row.value)
        print(row.id.padding(toLength: 44, withPad: " ", startingAt: 0), value.padding(toLength: 14, withPad: " ", startingAt: 0),
              row.unit.padding(toLength: 4, withPad: " ", startingAt: 0), row.note)
    }
}
