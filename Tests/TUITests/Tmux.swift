import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// tmux, driven from tests: one private server per session (its own socket, no user config),
/// so tests neither see nor disturb anyone else's tmux.
struct Tmux {
    /// The tmux executable on PATH, if any.
    static let path: String? = {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
            .split(separator: ":").map(String.init) + ["/usr/bin", "/usr/local/bin"]
        return directories.map { $0 + "/tmux" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// Whether the tmux tests run: always in CI (where .ci/run installs tmux, so a missing one
    /// fails loudly), elsewhere only if tmux is installed.
    static let shouldRun = path != nil || ProcessInfo.processInfo.environment["CI"] == "true"

    let socket: String
    let name: String
    let executable: String
    /// Where the shell around the command writes its exit status.
    let statusFile: URL

    /// Starts `command` in a detached 80×24 session; panes stay after the command exits
    /// (remain-on-exit) so its exit status and the restored screen can be read.
    init(_ command: [String], directory: URL) throws {
        guard let executable = Self.path else { throw TmuxError("tmux is not installed (apt-get install tmux)") }
        self.executable = executable
        let tag = UUID().uuidString.prefix(8).lowercased()
        socket = "multidoc-tui-tests-\(tag)"
        name = "tui-\(tag)"
        let config = directory.appendingPathComponent("tmux-\(tag).conf")
        try Data("set -g remain-on-exit on\nset -g status off\n".utf8).write(to: config)
        // The shell waits for the command and writes its status: tmux in containers does not
        // always reap a pane's process (the pane dies without a status), a shell always does.
        statusFile = directory.appendingPathComponent("status-\(tag)")
        let line = command.map(Self.quote).joined(separator: " ") + "; echo $? > " + Self.quote(statusFile.path)
        // The server outlives this command and keeps its output open: no pipe to read to EOF.
        try run(["-f", config.path, "new-session", "-d", "-s", name, "-x", "80", "-y", "24", line])
    }

    /// Types keys by tmux name (`Enter`, `Escape`, `F2`, `Up`) or single characters.
    func send(_ keys: String...) throws { try run(["send-keys", "-t", name] + keys) }

    /// Types text literally (UTF-8 as is).
    func type(_ text: String) throws { try run(["send-keys", "-t", name, "-l", text]) }

    /// The visible screen as text.
    func capture() throws -> String { try run(["capture-pane", "-p", "-t", name]) }

    /// The visible screen with its attributes as escape sequences (`capture-pane -e`).
    func captureStyled() throws -> String { try run(["capture-pane", "-p", "-e", "-t", name]) }

    /// Polls the screen every 100 ms until it contains `text`; while waiting, runs `nudge`
    /// every `nudgeEvery` (for a key that may come too early). Fails with the last screen.
    @discardableResult
    func waitFor(
        _ text: String, timeout: Duration = .seconds(15), nudgeEvery: Duration = .seconds(1),
        nudge: (() throws -> Void)? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> String {
        try await waitFor(all: [text], timeout: timeout, nudgeEvery: nudgeEvery, nudge: nudge, sourceLocation: sourceLocation)
    }

    /// Polls the screen until every one of `texts` is on it at once (a screen can be caught
    /// halfway through a redraw: its title new, its body old).
    func waitFor(
        all texts: [String], timeout: Duration = .seconds(15), nudgeEvery: Duration = .seconds(1),
        nudge: (() throws -> Void)? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> String {
        let text = texts.joined(separator: "', '")
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var nextNudge = clock.now + nudgeEvery
        var screen = ""
        while clock.now < deadline {
            screen = try capture()
            if texts.allSatisfy(screen.contains) { return screen }
            if let nudge, clock.now >= nextNudge {
                try nudge()
                nextNudge = clock.now + nudgeEvery
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("'\(text)' did not appear within \(timeout); the screen:\n\(screen)", sourceLocation: sourceLocation)
        throw TmuxError("timed out waiting for '\(text)'")
    }

    /// A pane variable (`pane_dead`, `pane_dead_status`, `alternate_on`, `pane_pid`).
    func pane(_ variable: String) throws -> String {
        try run(["list-panes", "-t", name, "-F", "#{\(variable)}"]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Polls until the command has exited; returns its exit status, or nil (with an issue) if
    /// it did not exit in time.
    func waitForExit(timeout: Duration = .seconds(15)) async throws -> Int32? {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            if let text = try? String(contentsOf: statusFile, encoding: .utf8),
               let status = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                return status
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("the TUI did not exit within \(timeout); the screen:\n\((try? capture()) ?? "")")
        return nil
    }

    /// The command's process id (the child of the pane's shell).
    func commandPID() throws -> Int32 {
        let shell = try pane("pane_pid")
        let children = try String(contentsOfFile: "/proc/\(shell)/task/\(shell)/children", encoding: .utf8)
        guard let pid = children.split(separator: " ").first.flatMap({ Int32($0) }) else {
            throw TmuxError("no command process under the pane's shell \(shell)")
        }
        return pid
    }

    /// Ends the private server and everything in it.
    func kill() { _ = try? run(["kill-server"]) }

    /// Runs one tmux command and returns what it printed.
    ///
    /// Not Foundation's `Process`: the first command forks the tmux server, which would inherit
    /// the test process's blocked signal mask (so it never sees SIGCHLD and panes never die)
    /// and its descriptors (so a pipe or Process's own monitor never reaches EOF and the test
    /// hangs). posix_spawn here starts tmux with a clean mask, default handlers and only
    /// descriptors 0–2, output going to a file.
    @discardableResult
    private func run(_ arguments: [String]) throws -> String {
        var environment = ProcessInfo.processInfo.environment
        for key in environment.keys where key.hasPrefix("MULTIDOC_") || key == "TMUX" { environment[key] = nil }
        environment["LANG"] = "C.UTF-8"
        environment["LC_ALL"] = "C.UTF-8"
        if environment["TERM"].map({ $0.isEmpty || $0 == "dumb" }) ?? true { environment["TERM"] = "xterm-256color" }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("tmux-out-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        let status = try Spawn.run(executable, ["-u", "-L", socket] + arguments, environment: environment, output: output.path)
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        guard status == 0 else {
            throw TmuxError("tmux \(arguments.prefix(2).joined(separator: " ")) failed (\(status)): \(text)")
        }
        return text
    }

    private static func quote(_ argument: String) -> String {
        "'" + argument.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

struct TmuxError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The built `multidoc-tui`, found next to the test bundle.
enum Product {
    static func tui() throws -> URL {
        var candidates: [URL] = [Bundle.main.bundleURL]
        if let argument = CommandLine.arguments.first { candidates.append(URL(fileURLWithPath: argument)) }
        candidates += Bundle.allBundles.map(\.bundleURL)
        for start in candidates {
            var url = start.standardizedFileURL
            for _ in 0..<6 {
                let binary = url.appendingPathComponent("multidoc-tui")
                if FileManager.default.isExecutableFile(atPath: binary.path) { return binary }
                url = url.deletingLastPathComponent()
            }
        }
        throw TmuxError("multidoc-tui is not built next to the tests (looked upwards from \(candidates.first?.path ?? "?")); run swift build first")
    }
}

/// posix_spawn + waitpid for a child that must not inherit this process's signal state or
/// descriptors.
enum Spawn {
    static func run(_ executable: String, _ arguments: [String], environment: [String: String], output: String) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Close everything else the child would inherit (glibc ignores descriptors closed meanwhile).
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for descriptor in open.compactMap(Int32.init) where descriptor > 2 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM, SIGWINCH] {
            sigaddset(&defaults, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard spawned == 0 else {
            throw TmuxError("cannot start \(executable): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw TmuxError("waitpid: \(String(cString: strerror(errno)))") }
        }
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }
}
