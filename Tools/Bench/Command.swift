#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import Synchronization

/// Runs a program to its end and times it from `posix_spawn` to its exit, seen by `waitid` in
/// this thread. Not Foundation's `Process`, which learns of the exit on its manager thread and
/// passes it on through a run loop (polled every 50 ms, woken early): hops that would be timed
/// with a command held to 50 ms.
enum Command {
    struct Result {
        var status: Int32
        var duration: Duration
        var output: URL
        var errors: URL

        var milliseconds: Double { duration.milliseconds }
        var seconds: Double { duration.milliseconds / 1000 }
    }

    /// Runs `executable` with `arguments`, standard output into `output` and standard error
    /// next to it (`<output>.stderr`), stdin from /dev/null, without the caller's `MULTIDOC_*`
    /// environment. Killed after `timeout` (an error).
    static func run(_ executable: URL, _ arguments: [String], output: URL, timeout: Duration) throws -> Result {
        let errors = output.appendingPathExtension("stderr")
        var actions = posix_spawn_file_actions_t()
        guard posix_spawn_file_actions_init(&actions) == 0 else { throw BenchError("posix_spawn_file_actions_init failed") }
        defer { posix_spawn_file_actions_destroy(&actions) }
        let flags = O_WRONLY | O_CREAT | O_TRUNC
        guard posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0) == 0,
              posix_spawn_file_actions_addopen(&actions, 1, output.path, flags, 0o644) == 0,
              posix_spawn_file_actions_addopen(&actions, 2, errors.path, flags, 0o644) == 0 else {
            throw BenchError("cannot redirect the output of \(executable.lastPathComponent) to \(output.path)")
        }
        let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("MULTIDOC_") }.map { "\($0.key)=\($0.value)" }
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let start = ContinuousClock.now
        let spawned = posix_spawn(&pid, executable.path, &actions, nil, argv, envp)
        guard spawned == 0 else {
            throw BenchError("cannot start \(executable.path): \(String(cString: strerror(spawned)))")
        }
        // The watchdog kills the child only while it has not been seen to exit (waitid with
        // WNOWAIT leaves it a zombie until then, so its pid cannot have been reused).
        let watch = Watch(), child = pid
        let watchdog = DispatchWorkItem {
            watch.state.withLock { state in
                if !state.exited {
                    kill(child, SIGKILL)
                    state.killed = true
                }
            }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(timeout.milliseconds * 1_000_000)), execute: watchdog)
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 {
            guard errno == EINTR else { throw BenchError("waiting for \(executable.lastPathComponent) failed: \(String(cString: strerror(errno)))") }
        }
        let duration = ContinuousClock.now - start
        let killed = watch.state.withLock { state in
            state.exited = true
            return state.killed
        }
        watchdog.cancel()
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        if killed {
            throw BenchError("\(executable.lastPathComponent) \(arguments.joined(separator: " ")) did not finish within \(timeout); output in \(output.path)")
        }
        // WIFEXITED / WEXITSTATUS are macros Swift does not import.
        let code: Int32 = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Result(status: code, duration: duration, output: output, errors: errors)
    }

    private final class Watch: Sendable {
        struct State {
            var exited = false
            var killed = false
        }
        let state = Mutex(State())
    }
}

extension Duration {
    var milliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }
}
