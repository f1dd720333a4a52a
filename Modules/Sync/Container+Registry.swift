#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model

extension Container {
    /// Every registered device.
    /// An entry whose file name and content disagree, or that claims sequences no device can
    /// reach, is not a registration (`container verify` names it).
    public func deviceRecords() -> [DeviceRecord] {
        listNames(devicesDirectory).filter { $0.hasSuffix(".json") }.compactMap(deviceRecord(named:))
    }

    /// One device's registry entry, if it is there and is one (see ``deviceRecords()``).
    func deviceRecord(_ device: DeviceID) -> DeviceRecord? { deviceRecord(named: "\(device).json") }

    private func deviceRecord(named name: String) -> DeviceRecord? {
        guard let record: DeviceRecord = try? readJSON(devicesDirectory.appendingPathComponent(name, isDirectory: false), limit: Self.maximumRegistrySize),
              name == "\(record.device).json",
              record.applied.values.allSatisfy({ ContainerBounds.problem(applied: $0) == nil }) else { return nil }
        return record
    }

    /// A stamp of what peers wrote to the registry: every registry file but `own`'s, by name,
    /// inode, time and size, folded into one value (`modified` is the newest file's time, -1
    /// for none). This device rewriting its own file does not change it, so a pass after a
    /// command that registered does not read every peer's record again; a peer's file replaced
    /// within one tick of the file system's clock does (the rename brings a new inode).
    public func peerRegistryStamp(excluding own: DeviceID) -> FileStamp {
        guard symlinkProblem(devicesDirectory) == nil, let folder = DirectoryHandle(path: devicesDirectory.path) else {
            return FileStamp(modified: -1, size: 0)
        }
        let ownName = own.description + ".json"
        let names = (folder.entries(".") ?? []).map(\.name).filter { $0.hasSuffix(".json") && $0 != ownName }.sorted()
        var hash = FNV1a()
        var newest: Int64 = -1
        for name in names {
            for byte in name.utf8 { hash.mix(UInt64(byte)) }
            guard let identity = FileIdentity(in: folder, name) else { continue }
            hash.mix(identity.inode)
            hash.mix(UInt64(bitPattern: identity.modified))
            hash.mix(UInt64(bitPattern: identity.size))
            newest = max(newest, identity.modified)
        }
        return FileStamp(modified: newest, size: Int64(bitPattern: hash.value))
    }

    /// The devices with a registry file (read or not): a tombstone from any other device is
    /// not applied.
    func registeredDevices() -> Set<DeviceID> {
        Set(listNames(devicesDirectory).compactMap { name in
            name.hasSuffix(".json") ? DeviceID(String(name.dropLast(5))) : nil
        })
    }

    /// Whether this device's registry file is there.
    public func isRegistered(_ device: DeviceID) -> Bool {
        // Asked before every save: a path without a URL built (most of the check's time).
        var info = stat()
        return stat(rootPath + "/devices/" + device.description + ".json", &info) == 0
    }
}
