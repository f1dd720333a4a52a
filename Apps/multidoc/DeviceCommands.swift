import AppSupport
import ArgumentParser
import Engine
import Foundation
import Model
import Storage

struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "This device's identity, and who may write into a signed container.",
        subcommands: [DeviceList.self, DeviceAdmit.self, DeviceRemove.self, NewIdentity.self])

    struct NewIdentity: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "new-identity",
            abstract: "Make this root a new device (for a root that was copied or restored from a backup).",
            discussion: """
                Two copies of one root save under one device UUID: the same log numbers with \
                different contents, and the copy's saves wait behind slots the other took ("a \
                different log with this sequence is already in the container"). Run this on the \
                copy: its waiting saves are saved again as a new device's and ship with the next \
                sync; what it shipped before stays, and the old UUID stays the other copy's. The \
                new device gets a new key too (a signed container admits it again); a device \
                removed from a signed container comes back this way. Refused on the root of a \
                signed container. Stop multidocd on this root first. Run it again if it was cut short.
                """)
        @OptionGroup var options: GlobalOptions
        @Flag(help: "Do it (without this flag, only say what would happen).") var yes = false

        func run() async throws {
            try await runCommand {
                let setup = try options.device.setup(environment: ProcessInfo.processInfo.environment, finishingIdentityChange: true)
                guard yes else {
                    if options.json { return try printJSON(NewIdentityPreviewRow(device: setup.identity.id.description)) }
                    print("this device is \(setup.identity.id); 'multidoc device new-identity --yes' makes it a new device and saves its waiting saves again as that device's")
                    return
                }
                let report = try setup.takeNewIdentity(stores: .standard(options: setup.storeOptions))
                if options.json { return try printJSON(NewIdentityRow(report)) }
                print("this device is now \(report.new) (was \(report.old)); \(report.saves) waiting saves of \(report.resaved.count) documents saved again: run 'multidoc sync' to ship them")
                if let fingerprint = report.newFingerprint {
                    print("its new key's fingerprint is \(fingerprint): in a signed container, have an admitted device run 'multidoc device admit \(fingerprint)' after this device's next sync")
                }
            }
        }
    }
}

// Signed containers (Docs/SECURITY.md): who may write.

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
            list.lines.forEach { print($0) }
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
