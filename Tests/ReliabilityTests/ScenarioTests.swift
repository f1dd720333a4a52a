import Engine
import Foundation
import Model
import Sync
import Testing
import TestSupport

/// The failure cases peer systems are known for, played over the faulty transport.
@Suite struct ScenarioTests {
    /// Lets the transport run `ticks` ticks with faults, the given devices syncing between them.
    private func churn(_ simulation: Simulation, ticks: Int, syncing: [SimDevice]) async {
        for _ in 0..<ticks {
            simulation.transport.step()
            for device in syncing where simulation.random.chance(0.5) { _ = await simulation.sync(device) }
        }
    }

    private func report(_ simulation: Simulation, _ label: String) -> Comment {
        Comment(rawValue: "\(label) (seed \(simulation.seed)):\n" + simulation.failures.prefix(20).joined(separator: "\n"))
    }

    /// Delete then re-create with the same name (iCloud's zombie): the new document must not be
    /// taken for the old one, and the old one must not come back, even when a peer edits the old
    /// one before it hears of the delete.
    @Test(arguments: [UInt64(11), 12, 13])
    func deleteThenRecreateWithTheSameName(seed: UInt64) async throws {
        let simulation = try Simulation(seed: seed, deviceCount: 3)
        let (a, b, c) = (simulation.devices[0], simulation.devices[1], simulation.devices[2])
        let old = try #require(await simulation.create(a, name: "Report"))
        await simulation.edit(a, old, text: "first version")
        await simulation.converge()
        simulation.transport.faultsEnabled = true

        await simulation.delete(a, old)
        let new = try #require(await simulation.create(a, name: "Report"))
        #expect(new != old)
        await simulation.edit(a, new, text: "second life")
        // B has not heard of the delete yet and edits the old document.
        await simulation.edit(b, old, text: "edit racing the delete")
        await churn(simulation, ticks: 30, syncing: [b, c])
        await simulation.edit(c, new, text: "edited on C")
        await churn(simulation, ticks: 10, syncing: [a, b, c])

        await simulation.converge()
        await simulation.check()
        for device in simulation.devices {
            let reports = await device.library.list().filter { $0.name == "Report" }
            #expect(reports.map(\.id) == [new], "\(device.name) lists \(reports.map(\.id))")
        }
        let passed = simulation.failures.isEmpty
        #expect(passed, report(simulation, "delete then re-create"))
    }

    /// A delete racing an edit and a rename on other devices: delete wins everywhere, and the
    /// racing logs do not bring the document back.
    @Test(arguments: [UInt64(21), 22, 23])
    func aDeleteRacingAnEdit(seed: UInt64) async throws {
        let simulation = try Simulation(seed: seed, deviceCount: 4)
        let devices = simulation.devices
        let doomed = try #require(await simulation.create(devices[0]))
        let survivor = try #require(await simulation.create(devices[1]))
        await simulation.converge()
        simulation.transport.faultsEnabled = true

        // Edits in flight (hidden or delayed), then the delete, then more edits and a rename.
        await simulation.edit(devices[1], doomed, text: "B before the delete")
        await simulation.edit(devices[2], survivor, text: "C edits the other one")
        simulation.transport.step()
        await simulation.delete(devices[0], doomed)
        await simulation.edit(devices[2], doomed, text: "C after the delete")
        await simulation.rename(devices[3], doomed, to: "Renamed while deleted")
        try await devices[3].restart()
        await simulation.edit(devices[3], doomed, text: "D after restarting")
        await churn(simulation, ticks: 40, syncing: devices)

        await simulation.converge()
        await simulation.check()
        let passed = simulation.failures.isEmpty
        #expect(passed, report(simulation, "delete racing an edit"))
    }

    /// A device offline while the container is reset (every file removed, a new identity): when
    /// it comes back, its offline edits and its new document are not lost, it does not resurrect
    /// the old container's documents in the new one, and every device agrees on what is shared.
    @Test(arguments: [UInt64(31), 32, 33])
    func aDeviceOfflineThroughAContainerReset(seed: UInt64) async throws {
        let simulation = try Simulation(seed: seed, deviceCount: 3)
        let (a, b, c) = (simulation.devices[0], simulation.devices[1], simulation.devices[2])
        let fromA = try #require(await simulation.create(a, name: "From A"))
        let fromC = try #require(await simulation.create(c, name: "From C"))
        await simulation.edit(b, fromC, text: "B's edit before the reset")
        await simulation.converge()
        simulation.transport.faultsEnabled = true

        simulation.transport.offline = [c.index]
        await simulation.edit(c, fromA, text: "C offline edit")
        await simulation.edit(c, fromC, text: "C offline edit of its own")
        let newOnC = try #require(await simulation.create(c, name: "New on C"))
        _ = await simulation.sync(c)

        // The user resets the container on A: every file goes, and the deletions travel to B.
        for name in (try? FileManager.default.contentsOfDirectory(atPath: a.container.path)) ?? [] {
            try? FileManager.default.removeItem(at: a.container.appendingPathComponent(name))
        }
        await churn(simulation, ticks: 50, syncing: [a, b])
        _ = await simulation.sync(a)
        let shared = try #require(await simulation.create(a, name: "After reset"))
        await simulation.edit(b, shared, text: "B in the new container")
        await churn(simulation, ticks: 20, syncing: [a, b])

        simulation.transport.offline = []
        await churn(simulation, ticks: 50, syncing: [a, b, c])
        await simulation.converge()
        // Folders of the old container still in a replica when a device adopts the new one are
        // left-overs (their info files name the replaced identity), not shared documents.
        await simulation.checkAgreement()
        if ProcessInfo.processInfo.environment["MULTIDOC_SIM_DUMP"] != nil { print(simulation.trace.joined(separator: "\n")) }
        #expect(simulation.failures.isEmpty, report(simulation, "offline through a container reset"))

        // Nothing C saved while offline is lost: each text is in some document on C.
        var texts: [String] = []
        for row in await c.library.list() {
            if let detail = try? await c.library.detail(row.id) { texts.append(detail.text) }
        }
        for expected in ["C offline edit", "C offline edit of its own"] {
            #expect(texts.contains(expected), "C lost \(expected.debugDescription); it holds \(texts)")
        }
        #expect(await c.library.list().contains { $0.name == "New on C" }, "C lost the document it created offline (\(newOnC))")
        for device in simulation.devices {
            #expect(await device.library.list().contains { $0.name == "After reset" && $0.location == .cloud },
                    "\(device.name) lacks the document created after the reset")
        }
    }
}
