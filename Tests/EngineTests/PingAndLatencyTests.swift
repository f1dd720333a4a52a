import Engine
import Foundation
import Model
import Settings
import Testing
import TestSupport

@Suite struct PingTests {
    @Test func twoDevicesPingEachOtherAndRecordLatencies() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: .sqlite, settings: [.enablePing: .bool(true)])
        let b = try harness.device("B", backend: .json, settings: [.enablePing: .bool(true)])
        let created = try await a.create()
        await b.sync()
        await a.inspect(created.id, rounds: 5)
        await b.inspect(created.id, rounds: 5)
        try await a.startPing()
        for _ in 0..<20 {
            for device in [b, a] {
                await device.sync()
                await device.waitForPendingPing()
            }
            if await a.pingFinished, await b.pingFinished { break }
        }
        #expect(await a.pingCounts.sent == 5)
        #expect(await b.pingCounts.sent == 5)
        let text = try await a.detail(created.id).text
        #expect(text.components(separatedBy: " pings").count - 1 == 10)
        let samples = LatencyLog(url: DeviceRoot(url: harness.root("A")).latenciesURL).read()
        #expect(samples.count >= 5)
        #expect(samples.allSatisfy { $0.fromName == "B" && $0.document == created.id })
        #expect(samples.contains { $0.roundTripMs != nil })
    }

    @Test func aRingOfThreePassesOnePingAroundInsteadOfMultiplyingIt() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let names = ["A", "B", "C"]
        var devices: [DocumentLibrary] = []
        for name in names { devices.append(try harness.device(name, settings: [.enablePing: .bool(true)])) }
        let created = try await devices[0].create()
        for device in devices {
            await device.sync()
            await device.inspect(created.id, rounds: 4)
        }
        try await devices[0].startPing()
        // Device UUIDs sort A < B < C, so each answers only its predecessor: A → B → C → A …
        for _ in 0..<40 {
            for index in [1, 2, 0] {
                await devices[index].sync()
                await devices[index].waitForPendingPing()
            }
            var done = true
            for device in devices where !(await device.pingFinished) { done = false }
            if done { break }
        }
        for device in devices {
            let counts = await device.pingCounts
            #expect(counts.sent == 4)
            #expect(counts.answered <= counts.sent)
        }
        await devices[0].sync()
        let text = try await devices[0].detail(created.id).text
        let pings = text.components(separatedBy: " ").enumerated().compactMap { index, word -> String? in
            word == "pings" ? text.components(separatedBy: " ")[index - 1] : nil
        }
        #expect(pings == Array(repeating: names, count: 4).flatMap { $0 }, "one ping travels the ring: \(pings)")
    }

    @Test func withoutEnablePingImportsAreRecordedButNotAnswered() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A")
        let b = try harness.device("B")
        let created = try await a.create()
        await b.sync()
        await b.inspect(created.id, rounds: 3)
        try await a.appendText(created.id, " START")
        await b.sync()
        await b.waitForPendingPing()
        #expect(await b.pingCounts.sent == 0)
        #expect(LatencyLog(url: DeviceRoot(url: harness.root("B")).latenciesURL).read().count == 1)
    }

    /// Edits that waited while nobody inspected are a backlog, not a trip: counting them would
    /// put their waiting time among the latencies. They are answered like any import, so a ping
    /// started just before the peer began inspecting does not stall the exchange.
    @Test func aBacklogImportedWhenInspectingStartsIsAnsweredButNotMeasured() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A")
        let b = try harness.device("B", settings: [.enablePing: .bool(true)])
        let created = try await a.create()
        await b.sync()
        try await a.appendText(created.id, " written while B was not looking")
        harness.clock.advance(10)
        await b.inspect(created.id, rounds: 3)
        await b.sync()
        await b.waitForPendingPing()
        #expect(try await b.detail(created.id).text.hasSuffix(" not looking B pings"))
        #expect(await b.pingCounts.sent == 1)
        let log = LatencyLog(url: DeviceRoot(url: harness.root("B")).latenciesURL)
        #expect(log.read().isEmpty)
        try await a.appendText(created.id, " now")
        harness.clock.advance(0.0125)
        await b.sync()
        await b.waitForPendingPing()
        let samples = log.read()
        #expect(samples.count == 1)
        #expect(abs((samples.first?.oneWayMs ?? 0) - 12.5) < 0.01, "\(samples)")
        #expect(await b.pingCounts.sent == 2)
    }
}

@Suite struct LatencyReportTests {
    let samples: [LatencySample] = (1...100).map { index in
        LatencySample(at: Date(timeIntervalSince1970: 1_700_000_000 + Double(index)), document: DocumentID(Fixed.uuid(1)),
                      fromDevice: Fixed.device(2), fromName: index == 1 ? "B \"quoted\", name" : "B",
                      oneWayMs: Double(index), roundTripMs: index.isMultiple(of: 2) ? Double(index) * 2 : nil)
    }

    @Test func statisticsComeFromTheHistogram() throws {
        let stats = try #require(LatencyStatistics(milliseconds: samples.map(\.oneWayMs)))
        #expect(stats.count == 100)
        #expect(abs(stats.minMs - 1) < 0.01 && abs(stats.maxMs - 100) < 0.1)
        #expect(abs(stats.p50Ms - 50) < 0.1)
        #expect(abs(stats.p90Ms - 90) < 0.1)
        #expect(abs(stats.p99Ms - 99) < 0.1)
        #expect(LatencyStatistics(milliseconds: []) == nil)
    }

    @Test func csvHasAHeaderAndOneRowPerSampleWithQuotedNames() {
        let lines = LatencyReport.csv(samples).split(separator: "\n")
        #expect(lines.count == 101)
        #expect(lines[0] == "at,document,from_device,from_name,one_way_ms,round_trip_ms")
        #expect(lines[1].contains("\"B \"\"quoted\"\", name\""))
        #expect(lines[1].hasSuffix(",1.000,"))
        #expect(lines[2].hasSuffix(",2.000,4.000"))
    }

    @Test func theSVGDrawsBothSeriesAndTheDistribution() {
        let svg = LatencyReport.svg(samples)
        #expect(svg.hasPrefix("<svg"))
        #expect(svg.components(separatedBy: "<polyline").count - 1 == 2)
        #expect(svg.components(separatedBy: "<rect class=\"bar\"").count - 1 >= 8)
        #expect(svg.contains("100 samples"))
        #expect(svg.contains(">one-way: 100 samples, p50 50.00 ms, p99 99.00 ms, max 100.00 ms<"))
        #expect(svg.contains(">round-trip: 50 samples, p50 100.00 ms, p99 200.00 ms, max 200.00 ms<"))
    }

    @Test func theLogKeepsMillisecondsAndReadsOlderFiles() throws {
        let folder = try TemporaryDirectory("latency-log")
        defer { folder.remove() }
        let log = LatencyLog(url: folder.appending("latencies.jsonl"))
        let at = Date(timeIntervalSince1970: 1_700_000_000.123)
        let sample = LatencySample(at: at, document: DocumentID(Fixed.uuid(1)), fromDevice: Fixed.device(2), fromName: "B", oneWayMs: 1.5, roundTripMs: nil)
        try log.append([sample])
        try log.append([sample])
        let read = log.read()
        #expect(read.count == 2)
        #expect(abs((read.first?.at.timeIntervalSince1970 ?? 0) - at.timeIntervalSince1970) < 0.001)
        // A torn last line (a process killed mid-append) costs that sample only.
        let handle = try FileHandle(forWritingTo: log.url)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"at":17000"#.utf8))
        try handle.close()
        #expect(log.read().count == 2)
        // The array earlier versions wrote beside it is read first.
        let older = #"[{"at":"2026-11-20T10:00:35Z","document":"00000001-0000-4000-8000-000000000000","fromDevice":"0000d002-0000-4000-8000-000000000000","fromName":"B","oneWayMs":3}]"#
        try Data(older.utf8).write(to: folder.appending("latencies.json"))
        let all = log.read()
        #expect(all.count == 3)
        #expect(all.first?.oneWayMs == 3)
    }

    @Test func oneOutlierDoesNotFlattenThePicture() {
        var spread = samples
        spread[50].oneWayMs = 100_000
        let svg = LatencyReport.svg(spread)
        #expect(svg.contains("1 above the scale"))
        #expect(svg.contains("time since the first sample"))
        #expect(svg.contains("max 100.00 s"))
    }

    @Test func theSparklineFollowsTheValues() {
        #expect(LatencyReport.sparkline([1, 2, 3, 4, 5, 6, 7, 8]) == "▁▂▃▄▅▆▇█")
        #expect(LatencyReport.sparkline([5, 5, 5]) == "▁▁▁")
        #expect(LatencyReport.sparkline(Array(repeating: 1, count: 100), width: 10).count == 10)
    }

    @Test func nonFiniteValuesAreLeftOutOfStatisticsAndSparklines() throws {
        let stats = try #require(LatencyStatistics(milliseconds: [1, .nan, 3, .infinity, -.infinity]))
        #expect(stats.count == 2)
        #expect(abs(stats.maxMs - 3) < 0.01)
        #expect(LatencyStatistics(milliseconds: [.nan]) == nil)
        #expect(LatencyReport.sparkline([1, .nan, 8, .infinity]) == "▁█")
        #expect(LatencyReport.sparkline([-.greatestFiniteMagnitude, 0, .greatestFiniteMagnitude]) == "▁▄█")
    }
}
