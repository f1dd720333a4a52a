#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model
import Storage
@testable import Sync
import Testing
import TestSupport

// The corpus of bad container files, each bad its own way: logs, info files, baselines, tombstones, registry entries, identities.
extension HostileInputTests {
    func corpus(a: DeviceID, b: DeviceID, random: inout SeededGenerator) throws -> [Case] {
        let container = Container(root: URL(fileURLWithPath: "/"))
        func rel(_ url: URL) -> String { String(url.path.dropFirst()) }
        let next = rel(container.logURL(doc, device: a, sequence: 3))
        let valid = try log(a, sequence: 3).encoded()
        let noise = Data((0..<4096).map { _ in UInt8.random(in: 0...255, using: &random) })
        let cut = Int.random(in: 1..<valid.count, using: &random)
        func json(_ text: String) -> Data { Data(text.utf8) }
        let future = Data(String(decoding: valid, as: UTF8.self).replacingOccurrences(of: "\"format\":1", with: "\"format\":9").utf8)
        var binaryLog = try log(a, sequence: 3)
        binaryLog.format = 2
        let binary = try binaryLog.encoded(container: Fixed.uuid(7))
        let binaryCut = Int.random(in: 1..<binary.count, using: &random)
        let deep = json(String(repeating: "{\"a\":", count: 50_000) + "1" + String(repeating: "}", count: 50_000))
        let deepArray = json(String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000))
        let other = DeviceID(Fixed.uuid(0xC0))
        var cases: [Case] = []
        func add(_ kind: String, _ name: String, onImport: Bool = true, _ plant: @escaping (URL) throws -> [URL]) {
            cases.append(Case(kind: kind, name: name, plant: plant, quarantinedOnImport: onImport))
        }
        // Logs.
        add("truncated log", "cut at byte \(cut)") { try Self.write(valid.prefix(cut), $0.appendingPathComponent(next)) }
        add("truncated log", "empty file") { try Self.write(Data(), $0.appendingPathComponent(next)) }
        add("random bytes", "4 KB of noise as a log") { try Self.write(noise, $0.appendingPathComponent(next)) }
        for shape in [#"{}"#, #"[]"#, #"null"#, #"{"format":1}"#, #""log""#, #"{"format":"one","changes":{}}"#,
                      #"{"format":1,"document":1,"device":[],"sequence":-3}"#] {
            add("wrong shape", shape) { try Self.write(json(shape), $0.appendingPathComponent(next)) }
        }
        add("future format", "format 9") { try Self.write(future, $0.appendingPathComponent(next)) }
        // Format 2 (binary) logs.
        add("truncated log", "binary log cut at byte \(binaryCut)") { try Self.write(binary.prefix(binaryCut), $0.appendingPathComponent(next)) }
        add("random bytes", "the MDC2 magic and noise") { try Self.write(Data("MDC2".utf8) + noise, $0.appendingPathComponent(next)) }
        add("future format", "binary log with flags this build does not know") {
            var bytes = binary
            bytes[5] = 0x80
            return try Self.write(bytes, $0.appendingPathComponent(next))
        }
        add("wrong shape", "a binary file of another kind") {
            var bytes = binary
            bytes[4] = 2
            return try Self.write(bytes, $0.appendingPathComponent(next))
        }
        add("wrong document ID", "binary log whose header names another document") {
            var lie = binaryLog
            lie.document = DocumentID(Fixed.uuid(0xBAD))
            return try Self.write(try lie.encoded(container: Fixed.uuid(7)), $0.appendingPathComponent(next))
        }
        add("wrong device ID", "binary log whose header names device C") {
            var lie = binaryLog
            lie.device = other
            return try Self.write(try lie.encoded(container: Fixed.uuid(7)), $0.appendingPathComponent(next))
        }
        add("left-over of a reset", "binary log written for a container a reset replaced", onImport: true) {
            try Self.write(try binaryLog.encoded(container: Fixed.uuid(0xBAD)), $0.appendingPathComponent(next))
        }
        cases[cases.count - 1].namedByVerify = false  // no identity here says 0xBAD was replaced
        add("gigantic count", "binary log announcing 2^60 changes") {
            var bytes = Array(binary)
            // The payload's change count follows the device name "A"; make it huge.
            let header = Int(bytes[6]) + 7
            let payloadStart = header + 1 + (bytes[header] >= 0x80 ? 1 : 0)
            var index = payloadStart
            for _ in 0..<3 { while bytes[index] >= 0x80 { index += 1 }; index += 1 }
            index += 2  // the name's length and "A"
            bytes.replaceSubrange(index...index, with: [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F])
            return try Self.write(Data(bytes), $0.appendingPathComponent(next))
        }
        add("gigantic file", "64 MB sparse log") { try Self.sparse($0.appendingPathComponent(next), size: 64 << 20) }
        add("deeply nested JSON", "50,000 nested objects") { try Self.write(deep, $0.appendingPathComponent(next)) }
        add("deeply nested JSON", "200,000 nested arrays") { try Self.write(deepArray, $0.appendingPathComponent(next)) }
        add("wrong document ID", "a log of another document") {
            try Self.write(try log(a, sequence: 3, document: DocumentID(Fixed.uuid(0xBAD))).encoded(), $0.appendingPathComponent(next))
        }
        add("wrong device ID", "claims device C in A's folder") { try Self.write(try log(other, sequence: 3).encoded(), $0.appendingPathComponent(next)) }
        add("wrong device ID", "stamp of another device") {
            var lie = try log(a, sequence: 3)
            lie.stamp = Stamp(wall: 1, counter: 0, device: other)
            return try Self.write(try lie.encoded(), $0.appendingPathComponent(next))
        }
        add("sequence out of range", "body says UInt64.max") {
            var lie = try log(a, sequence: 3)
            lie.sequence = .max
            return try Self.write(try lie.encoded(), $0.appendingPathComponent(next))
        }
        for name in ["0000000000000000.log", "18446744073709551615.log", "00000000000000ab.log", "abc.log", "-000000000000003.log", "3.log"] {
            add("sequence out of range", "file named \(name)", onImport: false) {
                try Self.write(valid, $0.appendingPathComponent(rel(container.logsDirectory(doc, device: a))).appendingPathComponent(name))
            }
        }
        add("special file", "a FIFO named as the next log") { root in
            let url = root.appendingPathComponent(next)
            guard mkfifo(url.path, 0o600) == 0 else { throw FileIOError(path: url.path, operation: "mkfifo", errno: errno) }
            return [url]
        }
        add("special file", "a folder named as the next log") { root in
            let url = root.appendingPathComponent(next)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            return [url]
        }
        // Metadata: info, tombstones, baselines, identity, registry (reported by verify).
        let info = rel(container.infoURL(doc, device: other))
        for (name, body) in [("random bytes", String(decoding: noise.prefix(200), as: UTF8.self)),
                             ("a name with NUL", #"{"format":1,"document":"\#(doc)","name":"a\u0000b","createdBy":"\#(other)","createdByName":"C","createdAt":1,"store":"sqlite"}"#),
                             ("a name with ..", #"{"format":1,"document":"\#(doc)","name":"..","createdBy":"\#(other)","createdByName":"C","createdAt":1,"store":"sqlite"}"#),
                             ("a name with /", #"{"format":1,"document":"\#(doc)","name":"../../etc/passwd","createdBy":"\#(other)","createdByName":"C","createdAt":1,"store":"sqlite"}"#),
                             ("a 10 KB name", #"{"format":1,"document":"\#(doc)","name":"\#(String(repeating: "n", count: 10_240))","createdBy":"\#(other)","createdByName":"C","createdAt":1,"store":"sqlite"}"#),
                             ("another document", #"{"format":1,"document":"\#(DocumentID(Fixed.uuid(0xBAD)))","name":"X","createdBy":"\#(other)","createdByName":"C","createdAt":1,"store":"sqlite"}"#),
                             ("an unknown store", #"{"format":1,"document":"\#(doc)","name":"X","createdBy":"\#(other)","createdByName":"C","createdAt":1,"store":"oracle"}"#)] {
            add("bad info file", name, onImport: false) { try Self.write(json(body), $0.appendingPathComponent(info)) }
        }
        add("gigantic file", "64 MB sparse info file", onImport: false) { try Self.sparse($0.appendingPathComponent(info), size: 64 << 20) }
        let tombstone = rel(container.tombstoneURL(doc, device: other))
        for (name, body) in [("random bytes", String(decoding: noise.prefix(100), as: UTF8.self)), ("wrong shape", "[1,2,3]"),
                             ("another document", #"{"format":1,"document":"\#(DocumentID(Fixed.uuid(0xBAD)))","deletedBy":"\#(other)","deletedAt":1}"#),
                             ("future format", #"{"format":9,"document":"\#(doc)","deletedBy":"\#(other)","deletedAt":1}"#)] {
            add("bad tombstone", name, onImport: false) { try Self.write(json(body), $0.appendingPathComponent(tombstone)) }
        }
        add("bad tombstone", "a name that is not <document>.<device>.json", onImport: false) {
            try Self.write(json("{}"), $0.appendingPathComponent("tombstones/\(doc).json"))
        }
        let baseline = rel(container.baselinesDirectory(doc).appendingPathComponent("\(other)-5.json"))
        for (name, body) in [("random bytes", String(decoding: noise.prefix(300), as: UTF8.self)), ("wrong shape", #"{"objects":7}"#),
                             ("another document", #"{"format":1,"document":"\#(DocumentID(Fixed.uuid(0xBAD)))","writtenBy":"\#(other)","writtenAt":1,"applied":{},"objects":{},"stamps":{},"tombstones":{}}"#),
                             ("future format", #"{"format":3,"document":"\#(doc)","writtenBy":"\#(other)","writtenAt":1,"applied":{},"objects":{},"stamps":{},"tombstones":{}}"#)] {
            add("bad baseline", name, onImport: false) { try Self.write(json(body), $0.appendingPathComponent(baseline)) }
        }
        add("gigantic file", "200 MB sparse baseline", onImport: false) { try Self.sparse($0.appendingPathComponent(baseline), size: 200 << 20) }
        add("bad registry entry", "random bytes", onImport: false) { try Self.write(noise.prefix(50), $0.appendingPathComponent("devices/\(other).json")) }
        add("bad registry entry", "another device's entry", onImport: false) {
            try Self.write(json(#"{"format":1,"device":"\#(a)","name":"A","model":"m","updatedAt":1,"applied":{}}"#), $0.appendingPathComponent("devices/\(other).json"))
        }
        add("bad identity", "random bytes", onImport: false) { try Self.write(noise.prefix(64), $0.appendingPathComponent("identity/\(other).json")) }
        add("bad identity", "future format", onImport: false) {
            try Self.write(json(#"{"format":7,"containerID":"\#(Fixed.uuid(1))","seededBy":"\#(other)","seededAt":1}"#), $0.appendingPathComponent("identity/\(other).json"))
        }
        add("bad identity", "gigantic (64 MB sparse)", onImport: false) { try Self.sparse($0.appendingPathComponent("identity/\(other).json"), size: 64 << 20) }
        add("stray name", "a file that is not a document folder", onImport: false) { try Self.write(noise.prefix(10), $0.appendingPathComponent("documents/not-a-uuid")) }
        return cases
    }
}
