#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The physical limit: two processes hand a 200-byte file back and forth through a folder with
/// nothing but write + fsync + rename + fsync(dir) and inotify, the least any durable
/// file-based hand-off can do on this disk and kernel. multidoc's figures are compared to it.
///
/// The bench process is side A; it starts itself again as side B (`handoff-peer`). Each file
/// carries its writer's CLOCK_MONOTONIC time at the start of the write, so the reader measures
/// the one-way time exactly (one host, one clock).
enum Handoff {
    struct Result: Sendable {
        var oneWayMs: [Double]
        var roundTripMs: [Double]
    }

    /// Runs side A for `rounds` round trips; `executable` is this program (started as side B).
    ///
    /// `pause`: how long each side waits before it sends, as a pinging device waits its burst
    /// window before it answers. The disk and the processor do not answer as fast after a pause
    /// as back to back (on this virtual machine a durable write after 20 ms idle takes about
    /// twice as long), so the ping is compared with a hand-off at its own pace too.
    static func measure(rounds: Int, folder: URL, executable: URL, pause: Duration = .zero) throws -> Result {
        let pauseMicroseconds = UInt32(clamping: pause.components.seconds * 1_000_000 + pause.components.attoseconds / 1_000_000_000_000)
        let toB = folder.appendingPathComponent("a2b"), toA = folder.appendingPathComponent("b2a")
        for directory in [toB, toA] { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) }
        let inbox = try Inbox(toA)
        defer { inbox.close() }
        let peer = Process()
        peer.executableURL = executable
        peer.arguments = ["handoff-peer", "--folder", folder.path, "--rounds", String(rounds), "--pause-microseconds", String(pauseMicroseconds)]
        let output = Pipe()
        peer.standardOutput = output
        try peer.run()
        defer { if peer.isRunning { kill(peer.processIdentifier, SIGKILL) } }
        let reader = output.fileHandleForReading
        guard String(decoding: reader.readData(ofLength: 6), as: UTF8.self) == "ready\n" else {
            throw BenchError("the hand-off peer did not start")
        }
        let outbox = try Outbox(toB)
        defer { outbox.close() }
        var result = Result(oneWayMs: [], roundTripMs: [])
        for round in 0..<rounds {
            if pauseMicroseconds > 0 { usleep(pauseMicroseconds) }
            let sent = monotonicNanoseconds()
            try outbox.send(name: String(round), stamp: sent)
            let stamp = try inbox.receive(name: String(round))
            let now = monotonicNanoseconds()
            result.oneWayMs.append(Double(now - stamp) / 1e6)
            result.roundTripMs.append(Double(now - sent) / 1e6)
        }
        // Side B prints its one-way samples (A → B), one per line, when it is done.
        let rest = String(decoding: reader.readDataToEndOfFile(), as: UTF8.self)
        peer.waitUntilExit()
        guard peer.terminationStatus == 0 else { throw BenchError("the hand-off peer failed (status \(peer.terminationStatus))") }
        result.oneWayMs += rest.split(separator: "\n").compactMap { Double($0) }
        return result
    }

    /// Side B: answers every file from A with one of its own.
    static func runPeer(folder: URL, rounds: Int, pauseMicroseconds: UInt32 = 0) throws {
        let inbox = try Inbox(folder.appendingPathComponent("a2b"))
        defer { inbox.close() }
        let outbox = try Outbox(folder.appendingPathComponent("b2a"))
        defer { outbox.close() }
        print("ready")
        fflush(nil)
        var samples: [Double] = []
        for round in 0..<rounds {
            let stamp = try inbox.receive(name: String(round))
            samples.append(Double(monotonicNanoseconds() - stamp) / 1e6)
            if pauseMicroseconds > 0 { usleep(pauseMicroseconds) }
            try outbox.send(name: String(round), stamp: monotonicNanoseconds())
        }
        print(samples.map { String(format: "%.6f", $0) }.joined(separator: "\n"))
    }

    static func monotonicNanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// Writes files durably into one folder.
    final class Outbox {
        let path: String
        let directory: Int32

        init(_ url: URL) throws {
            path = url.path
            directory = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard directory >= 0 else { throw BenchError("cannot open \(path): \(String(cString: strerror(errno)))") }
        }

        func close() { _ = Glibc.close(directory) }

        /// A 200-byte file named `name` holding `stamp`: temporary name, fsync, rename, fsync(dir).
        func send(name: String, stamp: Int64) throws {
            var bytes = Array(String(stamp).utf8)
            bytes.append(UInt8(ascii: "\n"))
            bytes += Array(repeating: UInt8(ascii: "."), count: max(0, 200 - bytes.count))
            let temporary = path + "/.tmp-" + name, final = path + "/" + name
            let fd = open(temporary, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw BenchError("cannot create \(temporary): \(String(cString: strerror(errno)))") }
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            let synced = fsync(fd)
            _ = Glibc.close(fd)
            guard written == bytes.count, synced == 0 else { throw BenchError("cannot write \(temporary)") }
            guard rename(temporary, final) == 0, fsync(directory) == 0 else { throw BenchError("cannot rename to \(final)") }
        }
    }

    /// Waits with inotify for files renamed into one folder.
    final class Inbox {
        let path: String
        let fd: Int32
        private var arrived: Set<String> = []
        private var buffer = [UInt8](repeating: 0, count: 64 * 1024)

        init(_ url: URL) throws {
            path = url.path
            fd = inotify_init1(Int32(IN_CLOEXEC))
            guard fd >= 0, inotify_add_watch(fd, path, UInt32(IN_MOVED_TO)) >= 0 else {
                throw BenchError("cannot watch \(path): \(String(cString: strerror(errno)))")
            }
        }

        func close() { _ = Glibc.close(fd) }

        /// Blocks until `name` was renamed into the folder, then returns the stamp it holds.
        func receive(name: String) throws -> Int64 {
            while !arrived.contains(name) {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { throw BenchError("reading inotify events failed") }
                var offset = 0
                let header = MemoryLayout<inotify_event>.size
                while offset + header <= count {
                    let length = buffer.withUnsafeBytes { Int($0.load(fromByteOffset: offset + 12, as: UInt32.self)) }
                    let nameBytes = buffer[(offset + header)..<min(count, offset + header + length)].prefix { $0 != 0 }
                    arrived.insert(String(decoding: nameBytes, as: UTF8.self))
                    offset += header + length
                }
            }
            arrived.remove(name)
            let file = path + "/" + name
            guard let data = FileManager.default.contents(atPath: file),
                  let line = String(decoding: data, as: UTF8.self).split(separator: "\n").first, let stamp = Int64(line) else {
                throw BenchError("\(file) is not a hand-off file")
            }
            return stamp
        }
    }
}
