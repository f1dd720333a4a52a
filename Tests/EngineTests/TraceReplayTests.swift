import Engine
import Foundation
import Testing
import TestSupport
import Text

/// Real editing traces (github.com/josephg/editing-traces, CC BY 4.0, in ../shared/traces next
/// to the package root) replayed through the engine: stores, format 2 logs, one container per
/// device, logs carried in causal order. A user's clone has no ../shared: then these are
/// skipped, saying so. `multidoc-trace` runs every trace whole.
@Suite struct TraceReplayTests {
    static let traces: URL? = {
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let folder = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/traces")
        return FileManager.default.fileExists(atPath: folder.path) && FileManager.default.fileExists(atPath: "/usr/bin/gzip") ? folder : nil
    }()

    @Test(.enabled(if: traces != nil, "../shared/traces (the editing traces) is not next to the package root"))
    func aSequentialTraceTypedOnOneDeviceEndsAtItsTextOnBoth() async throws {
        let folder = try TemporaryDirectory("trace")
        defer { folder.remove() }
        let trace = try EditingTrace.load(try #require(Self.traces).appendingPathComponent("sequential/sveltecomponent.json.gz"))
        let result = try await TraceReplay.run(trace, name: "sveltecomponent", in: folder.url, patchesPerSave: 200)
        #expect(result.mismatches.isEmpty, "\(result.mismatches)")
        #expect(result.kind == "sequential")
        #expect(result.saves >= trace.transactions.count / 200)
    }

    /// The concurrent trace's first 1,500 transactions (two agents typing at once): every save
    /// carried after exactly its parents; both devices end where the in-memory merge of the
    /// same transactions ends. (The whole trace takes minutes in a debug build; the benchmark
    /// runs it.)
    @Test(.enabled(if: traces != nil, "../shared/traces (the editing traces) is not next to the package root"))
    func aConcurrentTraceConvergesThroughTheEngine() async throws {
        let folder = try TemporaryDirectory("trace")
        defer { folder.remove() }
        var trace = try EditingTrace.load(try #require(Self.traces).appendingPathComponent("concurrent/friendsforever.json.gz"))
        trace.transactions = Array(trace.transactions.prefix(1_500))
        let merged = try trace.replayConcurrently().texts
        trace.endContent = try #require(merged.first)
        #expect(Set(merged).count == 1)
        let result = try await TraceReplay.run(trace, name: "friendsforever (1,500)", in: folder.url)
        #expect(result.mismatches.isEmpty, "\(result.mismatches)")
        #expect(result.kind == "concurrent")
        #expect(result.agents == 2)
        #expect(!trace.endContent.isEmpty)
    }
}
