import Dispatch

/// Work on several documents at once: the passes' first imports (waiting on the disk) and
/// their `stat` calls (waiting on the kernel).
enum SideBySide {
    /// `body` for every element, at most `width` at a time; the results in the elements' order.
    /// One element runs inline (a targeted pass after one save pays for no task group).
    static func map<Element: Sendable, Value: Sendable>(
        _ elements: [Element], width: Int, _ body: @escaping @Sendable (Element) async -> Value
    ) async -> [Value] {
        if elements.count == 1, let only = elements.first { return [await body(only)] }
        let collected = await withTaskGroup(of: (Int, Value).self, returning: [(Int, Value)].self) { group in
            var collected: [(Int, Value)] = []
            var next = 0
            // Plain loops rather than a nested function adding tasks: that form trapped in a
            // release build (an array write after `group.next()`), this one has not.
            while next < min(elements.count, max(1, width)) {
                let index = next, element = elements[next]
                next += 1
                group.addTask { (index, await body(element)) }
            }
            while let done = await group.next() {
                collected.append(done)
                if next < elements.count {
                    let index = next, element = elements[next]
                    next += 1
                    group.addTask { (index, await body(element)) }
                }
            }
            return collected
        }
        return collected.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// `body(index)` for every index below `count`, on every core (synchronous work such as
    /// `stat` calls); the results in index order.
    static func compute<Value>(_ count: Int, _ body: @Sendable (Int) -> Value?) -> [Value?] {
        // One (a targeted pass) runs inline, as `map` does.
        if count <= 1 { return (0..<count).map(body) }
        let results = Results<Value>(count: count)
        let lanes = min(count, 16)
        DispatchQueue.concurrentPerform(iterations: lanes) { lane in
            var index = lane
            while index < count {
                results.set(index, body(index))
                index += lanes
            }
        }
        return results.values
    }

    /// Results written by several threads at distinct indices.
    private final class Results<Value>: @unchecked Sendable {
        // Each index is written by exactly one thread and read only after every writer returned
        // (`concurrentPerform` returns when all iterations are done). A raw buffer, so no two
        // writers ever access one Swift variable (exclusivity checks would trap on an array).
        private let storage: UnsafeMutableBufferPointer<Value?>

        init(count: Int) {
            storage = .allocate(capacity: count)
            storage.initialize(repeating: nil)
        }

        deinit {
            storage.deinitialize()
            storage.deallocate()
        }

        func set(_ index: Int, _ value: Value?) { storage[index] = value }

        var values: [Value?] { Array(storage) }
    }
}
