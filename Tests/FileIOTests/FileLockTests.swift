import FileIO
import Foundation
import Testing
import TestSupport

@Suite struct FileLockTests {
    @Test func anExclusiveLockExcludesEveryOtherDescriptor() throws {
        let folder = try TemporaryDirectory("fileio")
        defer { folder.remove() }
        let url = folder.appending("lock")
        let first = try FileLock(url: url)
        let second = try FileLock(url: url)
        try first.lock(.exclusive)
        #expect(try second.tryLock(.exclusive) == false)
        #expect(try second.tryLock(.shared) == false)
        first.unlock()
        #expect(try second.tryLock(.exclusive))
        #expect(try first.tryLock(.shared) == false)
    }

    @Test func sharedLocksCoexistAndExcludeAWriter() throws {
        let folder = try TemporaryDirectory("fileio")
        defer { folder.remove() }
        let url = folder.appending("lock")
        let readers = try (0..<2).map { _ in try FileLock(url: url) }
        let writer = try FileLock(url: url)
        for reader in readers { #expect(try reader.tryLock(.shared)) }
        #expect(try writer.tryLock(.exclusive) == false)
        for reader in readers { reader.unlock() }
        #expect(try writer.tryLock(.exclusive))
    }

    @Test func aLockIsReleasedWhenItsOwnerGoesAway() throws {
        let folder = try TemporaryDirectory("fileio")
        defer { folder.remove() }
        let url = folder.appending("lock")
        var owner: FileLock? = try FileLock(url: url)
        try owner?.lock()
        let other = try FileLock(url: url)
        #expect(try other.tryLock() == false)
        owner = nil
        // A process another test starts at this moment holds a copy of the descriptor from its
        // fork until its exec closes it (O_CLOEXEC): the lock is free once that copy is gone.
        let deadline = ContinuousClock.now + .seconds(5)
        var taken = try other.tryLock()
        while !taken, ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.001)
            taken = try other.tryLock()
        }
        #expect(taken)
    }

    @Test func withLockRunsTheBodyHoldingTheLock() throws {
        let folder = try TemporaryDirectory("fileio")
        defer { folder.remove() }
        let url = folder.appending("lock")
        let lock = try FileLock(url: url)
        let other = try FileLock(url: url)
        let heldInside = try lock.withLock { try other.tryLock() == false }
        #expect(heldInside)
        #expect(try other.tryLock())
    }

    @Test func aLockFileInAMissingFolderIsANamedError() throws {
        let folder = try TemporaryDirectory("fileio")
        defer { folder.remove() }
        let url = folder.appending("no/such/folder/lock")
        let error = #expect(throws: FileIOError.self) { try FileLock(url: url) }
        #expect(error?.isMissing == true)
        #expect(error?.description.contains(url.path) == true)
    }
}
