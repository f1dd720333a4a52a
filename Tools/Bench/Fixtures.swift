import Foundation
import Model
import Storage
import Sync

/// Fills a container as a real device would, without a device root: each document is committed
/// to a memory store by the real ``Replicator`` and shipped as its log files and info entry.
struct ContainerFiller {
    let container: Container
    let device: DeviceIdentity
    let replicator: Replicator

    init(container url: URL, deviceName: String) {
        container = Container(root: url)
        device = DeviceIdentity(id: DeviceID(UUID()), name: deviceName, model: "benchmark")
        var replicator = Replicator(container: container, device: device)
        // What a device writes into a new container: format 2 (binary logs, text operations);
        // the container's identity is not known yet (the first library to open it seeds it).
        replicator.format = LogFormat(version: 2, container: nil)
        self.replicator = replicator
    }

    /// What `multidoc new` commits first: a text entry, the model version, the name.
    func creation(named name: String) -> [Change] {
        [
            .insert(ObjectID(UUID().uuidString.lowercased()), entity: Entity.textEntry, attributes: [
                Entity.TextEntry.text: .string(device.creationText), Entity.TextEntry.modified: .date(Date()),
            ]),
            .insert(ObjectID.seed("model-version"), entity: Entity.modelVersion, attributes: [Entity.ModelVersion.version: .int(SchemaVersion.current)]),
            .insert(ObjectID.seed("document-info"), entity: Entity.documentInfo, attributes: [Entity.DocumentInfo.name: .string(name)]),
        ]
    }

    /// One document as `multidoc new` makes it (a text entry, the model version, its name).
    @discardableResult
    func addDocument(named name: String, rows: Int = 0, rowsPerLog: Int = 100) throws -> DocumentID {
        let id = DocumentID(UUID())
        let store = try MemoryVolume().provider.open(.sqlite, at: URL(fileURLWithPath: "/memory/\(id)"), create: true)
        _ = try replicator.commit(creation(named: name), document: id, to: store, ship: true)
        var written = 0
        while written < rows {
            let count = min(rowsPerLog, rows - written)
            let changes: [Change] = (written..<(written + count)).map { index in
                .insert(ObjectID("row-\(index)"), entity: "Row", attributes: ["n": .int(Int64(index)), "text": .string("row number \(index) of the backlog")])
            }
            _ = try replicator.commit(changes, document: id, to: store, ship: true)
            try replicator.flush(id, in: store)
            written += count
        }
        try replicator.flush(id, in: store)
        let info = DocumentInfo(document: id, name: try DocumentName(name), createdBy: device.id, createdByName: device.name, createdAt: Date(), store: .sqlite)
        try replicator.publish(info, store: store, baseline: false)
        return id
    }

    /// One document of `changes` rows behind a baseline, as a device that saved them over
    /// `covered` saves and compacted would leave it (the logs the baseline holds are gone),
    /// then `logs` saves after the baseline of one new row each. Returns the rows it holds.
    func addBigDocument(named name: String, changes: Int, covered: UInt64 = 1_000, logs: Int) throws -> (id: DocumentID, rows: Int) {
        let id = DocumentID(UUID())
        let volume = MemoryVolume()
        let big = try volume.provider.open(.sqlite, at: URL(fileURLWithPath: "/memory/\(id)"), create: true)
        _ = try replicator.commit(creation(named: name), document: id, to: big, ship: false)
        // The rows straight into the store, stamped as saves 2…covered would have (no log
        // written: the baseline holds them).
        let now = UInt64(Date().timeIntervalSince1970 * 1000)
        try big.write { contents in
            contents.graph.objects.reserveCapacity(changes + 3)
            contents.sync.stamps.reserveCapacity(changes + 3)
            for index in 0..<changes {
                let stamp = contents.sync.clock.tick(now: now, device: device.id)
                let row = ObjectID("row-\(index)")
                contents.graph.objects[row] = ObjectRecord(entity: "Row", attributes: ["n": .int(Int64(index)), "text": .string("row number \(index)")])
                contents.sync.stamps[row] = ["n": stamp, "text": stamp]
            }
            contents.sync.applied[device.id] = covered
        }
        try replicator.writeBaseline(id, from: big)
        // The later saves against a small store at the same place in the sequence and clock
        // (they add rows; copying a million-object store per save would cost minutes).
        let clock = try big.read().sync.clock
        let small = try volume.provider.open(.sqlite, at: URL(fileURLWithPath: "/memory/\(id)-tail"), create: true)
        try small.write { contents in
            contents.sync.applied[device.id] = covered
            contents.sync.clock = clock
        }
        for index in 0..<logs {
            _ = try replicator.commit([.insert(ObjectID("late-\(index)"), entity: "Row", attributes: ["n": .int(Int64(index))])],
                                      document: id, to: small, ship: true)
            try replicator.flush(id, in: small)
        }
        let info = DocumentInfo(document: id, name: try DocumentName(name), createdBy: device.id, createdByName: device.name, createdAt: Date(), store: .sqlite)
        try replicator.publish(info, store: small, baseline: false)
        return (id, changes + logs)
    }
}
