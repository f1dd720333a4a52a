import Foundation
import Synchronization

/// Set by SIGTERM, SIGINT and SIGHUP; the UI loop checks it and leaves cleanly (endwin).
let terminationRequested = Atomic<Bool>(false)

/// Installs the handlers before curses starts, so curses keeps them instead of its own.
func installTerminationHandlers() {
    for number in [SIGTERM, SIGINT, SIGHUP] {
        signal(number) { _ in terminationRequested.store(true, ordering: .relaxed) }
    }
}
