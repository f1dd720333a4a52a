import Engine
import Foundation
import Model
import Sync
import Testing
import TestSupport

/// The seeds CI runs, or the one in `MULTIDOC_SIM_SEED` (replay a failure); steps per seed from
/// `MULTIDOC_SIM_STEPS` (more on demand), `MULTIDOC_SIM_SEEDS` runs that many seeds from 1.
enum SimulationPlan {
    static let environment = ProcessInfo.processInfo.environment
    static let defaultSeeds: [UInt64] = [1, 2, 3, 4, 5, 6]
    static let defaultSteps = 350

    static var seeds: [UInt64] {
        if let text = environment["MULTIDOC_SIM_SEED"], let seed = UInt64(text) { return [seed] }
        if let text = environment["MULTIDOC_SIM_SEEDS"], let count = UInt64(text), count > 0 { return Array(1...count) }
        return defaultSeeds
    }

    static var steps: Int {
        environment["MULTIDOC_SIM_STEPS"].flatMap { Int($0) } ?? defaultSteps
    }
}

@Suite struct SimulationTests {
    /// Random creates, edits (concurrent ones too), renames, deletes, moves both ways and
    /// restarts on 3–5 devices over a transport that delays, reorders, duplicates, truncates,
    /// hides and resurrects files; then everything is delivered and every device syncs until
    /// quiet, and every device must agree with the others and with the oracle.
    @Test(arguments: SimulationPlan.seeds)
    func randomRunConverges(seed: UInt64) async throws {
        let started = Date()
        let simulation = try Simulation(seed: seed)
        for _ in 0..<SimulationPlan.steps {
            try await simulation.randomStep()
        }
        await simulation.converge()
        await simulation.check()
        print(simulation.summary(seconds: Date().timeIntervalSince(started)))
        let passed = simulation.failures.isEmpty
        #expect(passed, """
            seed \(seed) failed; replay with MULTIDOC_SIM_SEED=\(seed) MULTIDOC_SIM_STEPS=\(SimulationPlan.steps) swift test --filter ReliabilityTests
            \(simulation.failures.prefix(20).joined(separator: "\n"))
            """)
    }
}
