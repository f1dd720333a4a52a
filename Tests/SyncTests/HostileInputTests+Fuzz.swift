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

// A seeded fuzz of the log decoder: mutated logs never crash it, and what it accepts is sound.
extension HostileInputTests {
    /// Mutates valid encoded logs (bit flips, byte changes, truncation, splicing, insertion,
    /// duplication) and decodes each: never a crash; whatever is accepted obeys the path's
    /// document, device and sequence and survives a round trip.
    @Test func fuzzTheLogDecoder() throws {
        let seed = ProcessInfo.processInfo.environment["MULTIDOC_FUZZ_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 0...UInt64.max)
        let target = ProcessInfo.processInfo.environment["MULTIDOC_FUZZ_INPUTS"].flatMap(Int.init) ?? 40_000
        print("HostileInputTests fuzz seed \(seed) (MULTIDOC_FUZZ_SEED=\(seed) replays it), \(target) inputs")
        var random = SeededGenerator(seed: seed)
        let device = Fixed.device(1)
        var seeds: [Data] = []
        for sequence in UInt64(1)...4 {
            var entry = try log(device, sequence: sequence, text: String(repeating: "é✓ ", count: Int(sequence) * 3))
            if sequence == 2 { entry.changes.append(LoggedChange(op: .delete, id: ObjectID("gone"))) }
            if sequence == 3 {
                entry.changes.append(LoggedChange(op: .insert, id: ObjectID("n"), entity: "Note",
                                                attributes: ["n": .int(7), "d": .date(Date(timeIntervalSince1970: 5)), "b": .bool(true)]))
            }
            seeds.append(try entry.encoded())
        }
        let deadline = ContinuousClock.now + .seconds(60)
        var inputs = 0, accepted = 0
        var byMutation: [String: Int] = [:]
        while inputs < target, ContinuousClock.now < deadline {
            let sequence = UInt64(Int.random(in: 0..<seeds.count, using: &random) + 1)
            var data = seeds[Int(sequence) - 1]
            let mutation: String
            switch Int.random(in: 0..<7, using: &random) {
            case 0:
                mutation = "bit flip"
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    let index = Int.random(in: 0..<data.count, using: &random)
                    data[index] ^= 1 << UInt8.random(in: 0..<8, using: &random)
                }
            case 1:
                mutation = "byte change"
                data[Int.random(in: 0..<data.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            case 2:
                mutation = "truncation"
                data = data.prefix(Int.random(in: 0..<data.count, using: &random))
            case 3:
                mutation = "splice"
                let other = seeds[Int.random(in: 0..<seeds.count, using: &random)]
                data = data.prefix(Int.random(in: 0...data.count, using: &random)) + other.suffix(Int.random(in: 0...other.count, using: &random))
            case 4:
                mutation = "insertion"
                let at = Int.random(in: 0...data.count, using: &random)
                let pieces = ["{", "}", "[", "]", ",", ":", "\"", "\\", "null", "1e999", "-0", "\u{0}", "\"format\":2,", "\"sequence\":0,", "\u{FEFF}"]
                data.insert(contentsOf: Data(pieces[Int.random(in: 0..<pieces.count, using: &random)].utf8), at: data.startIndex + at)
            case 5:
                mutation = "duplication"
                let start = Int.random(in: 0..<data.count, using: &random)
                let length = Int.random(in: 0...min(64, data.count - start), using: &random)
                let chunk = data.subdata(in: start..<(start + length))
                data.insert(contentsOf: chunk, at: data.startIndex + Int.random(in: 0...data.count, using: &random))
            default:
                mutation = "digit change"
                let digits = data.indices.filter { (48...57).contains(data[$0]) }
                if let index = digits.randomElement(using: &random) { data[index] = UInt8.random(in: 48...57, using: &random) }
            }
            byMutation[mutation, default: 0] += 1
            inputs += 1
            if let decoded = try? TransactionLog.decode(data, document: doc, device: device, sequence: sequence) {
                accepted += 1
                #expect(decoded.document == doc && decoded.device == device && decoded.sequence == sequence && decoded.stamp.device == device)
                #expect(decoded.format <= Container.formatVersion)
                let again = try TransactionLog.decode(try decoded.encoded(), document: doc, device: device, sequence: sequence)
                #expect(again == decoded, "round trip differs for seed \(seed), input \(inputs)")
            }
        }
        print("HostileInputTests fuzz: \(inputs) inputs (\(accepted) still valid logs), " + byMutation.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        #expect(inputs >= min(target, 20_000), "only \(inputs) inputs before the deadline")
    }
}
