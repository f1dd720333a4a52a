import Foundation
import Logging
import Model
import Settings
import Sync

/// The ping stunt's state (EnablePing, seeds 000 and 001).
struct PingState: Sendable {
    var inspected: DocumentID?
    /// When inspecting began: changes committed before it spent most of their time waiting for
    /// this device to look, not travelling, so they are not measured. They are still answered:
    /// a ping started a moment before the peer began inspecting must not stall the exchange.
    var since: Date?
    /// Pings left to send; nil: until stopped.
    var roundsLeft: Int?
    var sent = 0
    var answered = 0
    /// When my last ping was saved, until a peer's answer arrives.
    var lastPingAt: Date?
    var pending: Task<Void, Never>?
    /// A ping is being saved (the count goes down only once it is).
    var inFlight = false
}

extension DocumentLibrary {
    /// How long a device waits after importing a change before it answers, in case several
    /// updates come in a burst (the seed: "It waits a short time"). Subtracted from round trips.
    public static let burstWindow: Duration = .milliseconds(20)

    /// Changes committed more than this before inspecting began are a backlog: imported and
    /// answered, not measured.
    static let backlogGrace: TimeInterval = 2

    /// Starts inspecting a document (the detail view is open on it), or stops with nil. With
    /// EnablePing on, imported changes to it are answered with a ping, `rounds` times at most.
    public func inspect(_ id: DocumentID?, rounds: Int? = nil) {
        ping.pending?.cancel()
        ping = PingState(inspected: id, since: id == nil ? nil : configuration.now(), roundsLeft: rounds)
    }

    /// Pings sent and peers' changes answered so far.
    public var pingCounts: (sent: Int, answered: Int) { (ping.sent, ping.answered) }

    /// Whether the ping budget is spent.
    public var pingFinished: Bool { (ping.roundsLeft ?? 1) <= 0 && ping.pending == nil && !ping.inFlight }

    /// Waits until a ping scheduled after the burst window has been saved (for callers that
    /// drive passes one by one, like tests and the demo).
    public func waitForPendingPing() async {
        while let pending = ping.pending {
            await pending.value
            if ping.pending == pending { ping.pending = nil }
        }
    }

    /// Starts a ping exchange by saving one ping now (the seed's "START").
    public func startPing() async throws {
        guard let id = ping.inspected else { return }
        try await sendPing(id)
    }

    func didImportFromPeers(_ record: LocalDocumentRecord, logs: [ImportedLog]) async {
        guard record.id == ping.inspected else { return }
        let now = configuration.now()
        var samples: [LatencySample] = []
        for (index, log) in logs.enumerated() {
            // A backlog imported when inspecting starts would count its waiting time as latency.
            // The grace lets in a ping a peer started just before this device looked (two
            // daemons started together race for that).
            if let since = ping.since, log.committedAt < since - Self.backlogGrace { continue }
            var roundTrip: Double?
            if index == logs.count - 1, let sentAt = ping.lastPingAt {
                let burst = Double(Self.burstWindow.components.attoseconds) / 1e15 + Double(Self.burstWindow.components.seconds) * 1000
                roundTrip = max(0, now.timeIntervalSince(sentAt) * 1000 - burst)
                ping.lastPingAt = nil
            }
            samples.append(LatencySample(
                at: now, document: record.id, fromDevice: log.device, fromName: log.deviceName,
                oneWayMs: max(0, now.timeIntervalSince(log.committedAt) * 1000), roundTripMs: roundTrip))
        }
        do {
            try LatencyLog(url: root.latenciesURL).append(samples)
        } catch {
            logger.error("cannot record latencies", metadata: ["error": "\(error)"])
        }
        guard settings.enablePing, (ping.roundsLeft ?? 1) > 0, !ping.inFlight else { return }
        // A ring: answer only the predecessor, so N devices pass one ping around instead of
        // multiplying updates.
        guard let predecessor = predecessor(in: record.id), logs.contains(where: { $0.device == predecessor }) else { return }
        ping.answered += 1
        ping.pending?.cancel()
        let id = record.id
        ping.pending = Task { [weak self] in
            try? await Task.sleep(for: Self.burstWindow)
            guard !Task.isCancelled else { return }
            try? await self?.sendPing(id)
        }
    }

    func predecessor(in document: DocumentID) -> DeviceID? {
        guard let replicator = cloud else { return nil }
        var devices = Set(replicator.container.logDevices(document))
        devices.insert(identity.id)
        let ring = devices.sorted()
        guard ring.count > 1, let index = ring.firstIndex(of: identity.id) else { return nil }
        return ring[(index + ring.count - 1) % ring.count]
    }

    func sendPing(_ id: DocumentID) async throws {
        guard (ping.roundsLeft ?? 1) > 0, !ping.inFlight else {
            ping.pending = nil
            return
        }
        ping.inFlight = true
        ping.pending = nil
        defer { ping.inFlight = false }
        try await appendText(id, " \(identity.name) pings")
        if let left = ping.roundsLeft { ping.roundsLeft = left - 1 }
        ping.lastPingAt = configuration.now()
        ping.sent += 1
        logger.info("ping", metadata: ["document": "\(id)", "sent": "\(ping.sent)"])
    }
}
