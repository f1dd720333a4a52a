import AppSupport
import ArgumentParser
import Engine
import Foundation

// Signed and encrypted containers (Docs/SECURITY.md): who may write, and the container key.

struct DeviceList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "The container's devices: admitted, asking to join, removed, with their fingerprints.",
        discussion: """
            Compare a fingerprint here with the one the other device shows ('multidoc device list' \
            there, first line) before admitting it: the fingerprint is what tells a device from one \
            pretending to be it.
            """)
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await runCommand {
            let (_, library) = try options.bootstrap()
            let list = try await library.closing { try await $0.deviceList() }
            if options.json { return try printJSON(list) }
            print("this device: \(list.thisDevice), fingerprint \(list.thisFingerprint ?? "none (no usable device key)")")
            print(list.signed ? "container: signed\(list.encrypted ? " and encrypted" : ""), root \(list.root ?? "?")"
                : "container: not signed (anyone who can write into it is trusted; 'multidoc container upgrade --sign' signs it)")
            for entry in list.devices {
                print("  \(entry.fingerprint ?? "(no key)")  \(entry.name)  \(entry.device.prefix(8))  \(entry.state)"
                      + (entry.warning.map { "  (careful: \($0))" } ?? ""))
            }
            for problem in list.problems { print("  not trusted: \(problem)") }
            if list.devices.contains(where: { $0.state == "asks to join" }) {
                print("admit one with 'multidoc device admit FINGERPRINT' after comparing it on that device")
            }
        }
    }
}

struct DeviceAdmit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admit", abstract: "Admit devices asking to join a signed container, by fingerprint.",
        discussion: """
            A device asks to join by syncing with the signed container; its fingerprint is the first \
            line of 'multidoc device list' on it. Compare it, then run this on an admitted device. \
            What the new device saved while it waited is accepted from then on.
            """)
    @OptionGroup var options: GlobalOptions
    @Argument(help: "Fingerprints of the devices to admit, whole (16 hex digits, as `multidoc device list` shows them).") var fingerprints: [String]

    func validate() throws {
        guard !fingerprints.isEmpty else { throw ValidationError("give the fingerprint of the device to admit ('multidoc device list' shows the ones asking)") }
    }

    func run() async throws {
        try await runCommand {
            let (_, library) = try options.bootstrap()
            let names = try await library.closing { try await $0.admit(fingerprints: fingerprints) }
            if options.json { return try printJSON(["admitted": names]) }
            print("admitted \(names.joined(separator: ", "))")
        }
    }
}

struct DeviceRemove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Remove an admitted device from a signed container (a lost or retired one).",
        discussion: """
            What the device wrote before, as far as this device has applied it, stays accepted; \
            anything it signs from now on is refused by every device, whatever date it claims. \
            To bring the device back, give it a new root and admit that.
            """)
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The device: its fingerprint (or first digits), UUID prefix or name.") var device: String

    func run() async throws {
        try await runCommand {
            let (_, library) = try options.bootstrap()
            let name = try await library.closing { try await $0.removeDevice(device) }
            if options.json { return try printJSON(["removed": name]) }
            print("removed \(name): nothing it signs from now on is accepted")
        }
    }
}

extension ContainerCommand {
    struct ContainerUnlock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "unlock", abstract: "Give this device the key of an encrypted container (from its passphrase).",
            discussion: """
                The passphrase comes from --passphrase-file, the \(Passphrase.environmentVariable) \
                environment variable, or the terminal. The key derived from it is kept in the root's \
                container.key (0600); the passphrase is not kept. A wrong passphrase changes nothing \
                (exit 15).
                """)
        @OptionGroup var options: GlobalOptions
        @Option(help: "Read the passphrase from the first line of this file.") var passphraseFile: String?

        func run() async throws {
            try await runCommand {
                let passphrase = try Passphrase.read(file: passphraseFile, environment: ProcessInfo.processInfo.environment, confirm: false)
                let (_, library) = try options.bootstrap()
                let unlocked = try await library.closing { try await $0.unlockContainer(passphrase: passphrase) }
                if options.json { return try printJSON(["unlocked": unlocked]) }
                print(unlocked ? "unlocked: this device reads and writes the encrypted container" : "the container is not encrypted; nothing to unlock")
            }
        }
    }
}

extension ContainerCommand {
    struct ContainerTrust: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "trust", abstract: "Pin the root a signed container is trusted under, by its whole fingerprint.",
            discussion: """
                A device meeting a signed container for the first time trusts the one root it finds \
                and says so; when it finds signing records of two keys it trusts neither and waits \
                for this command. Read the fingerprint off `multidoc device list` on a device that \
                synced with the container before. `multidoc init --expect-root` does the same ahead \
                of the first contact.
                """)
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The root's fingerprint, whole (16 hex digits).") var fingerprint: String
        @Flag(help: "Trust this root although another is trusted now (what was learned under it is forgotten).") var replace = false

        func run() async throws {
            try await runCommand {
                let (_, library) = try options.bootstrap()
                let pinned = try await library.closing { try await $0.trustRoot(fingerprint: fingerprint, replacing: replace) }
                if options.json { return try printJSON(["root": pinned]) }
                print("trusting root \(pinned): only devices it admits are read")
            }
        }
    }
}
