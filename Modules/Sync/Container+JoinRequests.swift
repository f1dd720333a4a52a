import _CryptoExtras
import Crypto
import FileIO
import Foundation
import Model

extension Container {
    // MARK: Join requests

    /// Devices whose registry entry carries a key no admission lists: they ask to join. Each
    /// entry must be signed by the key it carries.
    public func joinRequests() -> [JoinRequest] {
        guard let keys, let root = keys.policy.root else { return [] }
        let policy = keys.policy
        return listNames(devicesDirectory).filter { $0.hasSuffix(".json") }.compactMap { name -> JoinRequest? in
            let url = devicesDirectory.appendingPathComponent(name, isDirectory: false)
            guard let device = DeviceID(String(name.dropLast(5))), policy.admitted[device] == nil, policy.removed[device] == nil,
                  let bytes = try? Array(readFile(url, limit: Self.maximumRegistrySize)),
                  var envelope = try? ContainerEnvelope(decoding: bytes, maximumPayload: bytes.count),
                  envelope.kind == .registry, DeviceID(envelope.header.writer) == device, envelope.header.container == root.container
            else { return nil }
            if envelope.isEncrypted {
                guard (try? unseal(&envelope, keys: keys, container: root.container)) != nil else { return nil }
            }
            guard let record = try? Self.decodeJSON(DeviceRecord.self, from: Data(envelope.payload)), record.device == device,
                  let key = record.key, (try? Self.verify(envelope, bytes, key: key)) != nil else { return nil }
            return JoinRequest(device: device, name: record.name, model: record.model, key: key)
        }
    }

    /// The policy, the join requests and the trust records not taken (`device list`).
    public func trustSummary() -> TrustSummary {
        let policy = keys?.policy ?? ContainerPolicy()
        var problems: [QuarantinedFile] = []
        if let root = policy.root { problems = loadTrust(container: root.container, remembered: root).problems }
        // The policy as just read again.
        return TrustSummary(policy: keys?.policy ?? policy, requests: joinRequests(), problems: problems)
    }
}
