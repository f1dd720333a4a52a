import Foundation
import MultidocKit
import OpenAPIRuntime

/// The change feed as Server-Sent Events: `: ready` once subscribed, then one
/// `event: change` per ``DocumentChange`` with the `Change` schema's JSON as its data.
enum ChangeFeed {
    static func body(_ changes: AsyncStream<DocumentChange>, now: @escaping @Sendable () -> Date = Date.init) -> HTTPBody {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        // A client that stops reading loses the oldest events past 4,096, not the daemon's memory.
        let (stream, continuation) = AsyncStream.makeStream(of: HTTPBody.ByteChunk.self, bufferingPolicy: .bufferingNewest(4096))
        continuation.yield(ArraySlice(": ready\n\n".utf8))
        let task = Task {
            for await change in changes {
                var entry = Components.Schemas.Change(change)
                entry.at = now()
                guard let data = try? encoder.encode(entry) else { continue }
                var event = Array("event: change\ndata: ".utf8)
                event.append(contentsOf: data)
                event.append(contentsOf: "\n\n".utf8)
                continuation.yield(ArraySlice(event))
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return HTTPBody(stream, length: .unknown, iterationBehavior: .single)
    }
}

extension Components.Schemas.Change {
    init(_ change: DocumentChange) {
        func id(_ uuid: UUID) -> String { uuid.uuidString.lowercased() }
        switch change {
        case .created(let document): self.init(kind: .created, document: id(document.id), name: document.name)
        case .discovered(let document): self.init(kind: .discovered, document: id(document.id), name: document.name)
        case .imported(let uuid, let from): self.init(kind: .imported, document: id(uuid), from: from)
        case .viewable(let uuid): self.init(kind: .viewable, document: id(uuid))
        case .saved(let uuid): self.init(kind: .saved, document: id(uuid))
        case .renamed(let uuid, let old, let new): self.init(kind: .renamed, document: id(uuid), name: new, from: [old])
        case .deleted(let uuid, let name): self.init(kind: .deleted, document: id(uuid), name: name)
        case .stalled(let name, let detail): self.init(kind: .stalled, name: name, detail: detail)
        }
    }
}
