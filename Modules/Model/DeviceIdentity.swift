/// Who a device is: a stable UUID per device root, a display name and a model string.
public struct DeviceIdentity: Hashable, Sendable, Codable {
    public var id: DeviceID
    /// Default: the host name.
    public var name: String
    /// Default: OS and machine, e.g. `Linux x86_64`.
    public var model: String

    public init(id: DeviceID, name: String, model: String) {
        self.id = id
        self.name = name
        self.model = model
    }

    /// The text a new document starts with (seed 000: `<device name> (<device model>)`).
    public var creationText: String { "\(name) (\(model))" }
}
