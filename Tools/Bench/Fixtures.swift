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

    /// One document as `multidoc new` makes it (a text entry, the model version, its name).
    @discardableResult
    func addDocument(named name: String, rows: Int = 0, rowsPerLog: Int = 100) throws -> DocumentID {
        let id = DocumentID(UUID())
        let store = try MemoryVolume().provider.open(.sqlite, at: URL(fileURLWithPath: "/memory/\(id)"), create: true)
        _ = try replicator.commit([
            .insert(ObjectID(UUID().uuidString.lowercased()), entity: Entity.textEntry, attributes: [
                Entity.TextEntry.text: .string(device.creationText), Entity.TextEntry.modified: .date(Date()),
            ]),
            .insert(ObjectID.seed("model-version"), entity: Entity.modelVersion, attributes: [Entity.ModelVersion.version: .int(SchemaVersion.current)]),
            .insert(ObjectID.seed("document-info"), entity: Entity.documentInfo, attributes: [Entity.DocumentInfo.name: .string(name)]),
        ], document: id, to: store, ship: true)
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
}
