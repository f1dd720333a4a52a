/// Polls `condition` every `interval` until it holds or `timeout` passes; true if it held. The
/// timeout is a bound for a test that would otherwise hang, never a figure the test checks.
public func eventually(
    timeout: Duration, every interval: Duration = .milliseconds(20), _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try await condition()
}
