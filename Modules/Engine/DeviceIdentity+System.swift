#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Model

extension DeviceIdentity {
    /// The host name, the default device name.
    public static var hostName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return "localhost" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "localhost" : name
    }

    /// OS and machine, e.g. `Linux x86_64`.
    public static var systemModel: String {
        var info = utsname()
        guard uname(&info) == 0 else { return "Linux" }
        let system = withUnsafeBytes(of: &info.sysname) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let machine = withUnsafeBytes(of: &info.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return "\(system) \(machine)"
    }
}
