#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Model
import Synchronization

/// Watches a folder tree with inotify (one watch per directory, added as directories appear)
/// and reports which paths changed. `IN_Q_OVERFLOW` becomes ``Event/rescan``: the kernel dropped
/// events, so everything must be looked at again. A blocking reader thread wakes in tens of
/// microseconds, faster than a DispatchSource bridged into an AsyncStream.
///
/// The watcher is a hint, not the truth: callers keep a periodic full rescan as a safety net.
public final class ContainerWatcher: Sendable {
    public enum Event: Sendable, Equatable {
        /// Something under this path was created, written, renamed or removed.
        case changed(URL)
        /// Events were lost (queue overflow) or the root itself went away: rescan everything.
        case rescan
    }

    private struct State {
        /// Each watched folder as its parent's watch and its name: a path per folder (four
        /// per document, 10,000 documents) was 4.5 MB of a daemon's memory; most names are
        /// UUIDs, kept as their 16 bytes.
        var watches: [Int32: Watched] = [:]
        var stopped = false

        /// The folder's path, from the root's (nil: a folder on the way is no longer watched).
        func path(of descriptor: Int32, root: String) -> String? {
            var names: [String] = []
            var current = descriptor
            while let folder = watches[current] {
                guard let parent = folder.parent else {
                    return names.reversed().reduce(root) { $0 + "/" + $1 }
                }
                guard names.count < 64 else { return nil }
                names.append(folder.name.text)
                current = parent
            }
            return nil
        }
    }

    /// A watched folder: its parent's watch (nil for the root) and its name.
    private struct Watched {
        var parent: Int32?
        var name: Name
    }

    private enum Name {
        case uuid(UUID)
        case text(String)

        init(_ name: String) {
            if name.utf8.count == 36, let uuid = UUIDText.parse(name), UUIDText.lowercase(uuid) == name {
                self = .uuid(uuid)
            } else {
                self = .text(name)
            }
        }

        var text: String {
            switch self {
            case .uuid(let uuid): UUIDText.lowercase(uuid)
            case .text(let text): text
            }
        }
    }

    private let root: URL
    /// `root`'s path, made once: every event's path starts with it.
    private let rootPath: String
    private let fd: Int32
    private let stopPipe: (read: Int32, write: Int32)
    private let state = Mutex(State())
    private let continuation: AsyncStream<Event>.Continuation
    private let handler: (@Sendable (Event) -> Void)?
    /// The events, in the order the kernel reported them (none when the watcher has a handler).
    public let events: AsyncStream<Event>

    /// Starts watching `root` and every folder under it.
    /// - Parameter handler: called with each event on the watcher's thread, in order, instead
    ///   of ``events`` getting it: one task switch less between a file landing and the work it
    ///   starts. It must return quickly: the next events wait for it.
    /// - Throws: ``SyncError`` if inotify is not available or `root` cannot be watched.
    public init(root: URL, handler: (@Sendable (Event) -> Void)? = nil) throws(SyncError) {
        self.root = root
        rootPath = root.path
        self.handler = handler
        let fd = inotify_init1(Int32(IN_CLOEXEC))
        guard fd >= 0 else { throw SyncError(.containerUnavailable, path: root.path, detail: "inotify: \(String(cString: strerror(errno)))") }
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else {
            close(fd)
            throw SyncError(.containerUnavailable, path: root.path, detail: "pipe: \(String(cString: strerror(errno)))")
        }
        self.fd = fd
        self.stopPipe = (pipeFDs[0], pipeFDs[1])
        (events, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(4096))
        addWatches(under: root.path)
        let thread = Thread { [self] in self.readLoop() }
        thread.name = "multidoc.inotify"
        thread.start()
    }

    deinit {
        close(fd)
        close(stopPipe.read)
        close(stopPipe.write)
    }

    /// Stops the reader thread and finishes ``events``.
    public func stop() {
        let wasStopped = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return state.stopped
        }
        guard !wasStopped else { return }
        var byte: UInt8 = 1
        _ = write(stopPipe.write, &byte, 1)
    }

    private static let mask: UInt32 = UInt32(IN_CREATE | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

    /// Watches `path` and every folder under it. Symbolic links are never followed (a link
    /// loop in the container would otherwise recurse forever), and a folder already watched
    /// (same device and inode) is not walked twice.
    /// `parent`: the watch of the folder `path` lies in, and its name there (nil: the root).
    private func addWatches(under path: String, parent: (descriptor: Int32, name: String)? = nil) {
        var visited: Set<FolderKey> = []
        addWatches(under: path, parent: parent, visited: &visited)
    }

    private func addWatches(under path: String, parent: (descriptor: Int32, name: String)?, visited: inout Set<FolderKey>) {
        // The root may be given through a link; nothing under it is followed.
        guard let key = FolderKey(path: path, followingLink: path == root.path), visited.insert(key).inserted else { return }
        let flags = path == root.path ? Self.mask : Self.mask | UInt32(IN_DONT_FOLLOW)
        let descriptor = inotify_add_watch(fd, path, flags)
        guard descriptor >= 0 else { return }
        let watched = parent.map { Watched(parent: $0.descriptor, name: Name($0.name)) } ?? Watched(parent: nil, name: .text(""))
        state.withLock { $0.watches[descriptor] = watched }
        for name in Self.names(in: path) where !name.hasPrefix(".") {
            let child = path + "/" + name
            if FolderKey(path: child) != nil { addWatches(under: child, parent: (descriptor, name), visited: &visited) }
        }
    }

    /// Every file under `path` (dot names skipped, links not followed), relative to it.
    private static func files(under path: String, prefix: String = "", depth: Int = 0) -> [String] {
        guard depth < 32 else { return [] }
        var found: [String] = []
        for name in names(in: path) where !name.hasPrefix(".") {
            let relative = prefix.isEmpty ? name : prefix + "/" + name
            found.append(relative)
            if FolderKey(path: path + "/" + name) != nil {
                found += files(under: path + "/" + name, prefix: relative, depth: depth + 1)
            }
        }
        return found
    }

    private static func names(in path: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    }

    /// A real folder (not a link to one), told apart by device and inode.
    private struct FolderKey: Hashable {
        var device: UInt64
        var inode: UInt64

        init?(path: String, followingLink: Bool = false) {
            var info = stat()
            guard (followingLink ? stat(path, &info) : lstat(path, &info)) == 0, info.st_mode & S_IFMT == S_IFDIR else { return nil }
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }

    private func readLoop() {
        let bufferSize = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: bufferSize, alignment: MemoryLayout<inotify_event>.alignment)
        defer {
            buffer.deallocate()
            continuation.finish()
        }
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0)]
        while true {
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if fds[1].revents != 0 { return }
            guard fds[0].revents & Int16(POLLIN) != 0 else { continue }
            let count = read(fd, buffer, bufferSize)
            if count <= 0 {
                if count < 0, errno == EINTR || errno == EAGAIN { continue }
                return
            }
            var offset = 0
            let headerSize = MemoryLayout<inotify_event>.size
            while offset + headerSize <= count {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let nameLength = Int(event.len)
                var name = ""
                if nameLength > 0 {
                    let namePointer = buffer.advanced(by: offset + headerSize).assumingMemoryBound(to: CChar.self)
                    name = String(cString: namePointer)
                }
                offset += headerSize + nameLength
                handle(event, name: name)
            }
        }
    }

    private func deliver(_ event: Event) {
        if let handler { handler(event) } else { continuation.yield(event) }
    }

    private func handle(_ event: inotify_event, name: String) {
        if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
            // Events were lost, folder creations among them: watch whatever is there now
            // (a folder already watched keeps its watch), then let the caller look at everything.
            addWatches(under: rootPath)
            deliver(.rescan)
            return
        }
        let folderArrived = event.mask & UInt32(IN_ISDIR) != 0 && event.mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0
        // Temporary names (most events: a file is written under one, then renamed) tell
        // nothing; their rename reports the real name. A folder under one is watched all the same.
        if name.hasPrefix("."), !folderArrived { return }
        let (known, directory) = state.withLock { state in (state.watches[event.wd] != nil, state.path(of: event.wd, root: rootPath)) }
        if event.mask & UInt32(IN_IGNORED) != 0 {
            state.withLock { $0.watches[event.wd] = nil }
            if directory == rootPath { deliver(.rescan) }
            return
        }
        guard known else { return }
        guard let directory else {
            // A folder whose parent's watch is gone (removed and made again in between): look
            // at everything rather than guess its path.
            deliver(.rescan)
            return
        }
        if event.mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
            if directory == rootPath { deliver(.rescan) }
            return
        }
        let path = name.isEmpty ? directory : directory + "/" + name
        if folderArrived {
            // Watch the new folder, then report what is already in it: files may have landed
            // before the watch existed.
            addWatches(under: path, parent: (event.wd, name))
            for relative in Self.files(under: path) {
                deliver(.changed(URL(fileURLWithPath: path + "/" + relative)))
            }
        }
        if name.hasPrefix(".") { return }  // temporary names; their rename reports the real one
        deliver(.changed(URL(fileURLWithPath: path)))
    }
}
