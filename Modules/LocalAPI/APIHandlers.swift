import Foundation
import HTTPTypes
import Model
import MultidocKit
import OpenAPIRuntime

/// The API's operations (generated from `openapi.yaml` at build time), each one call of
/// the device's public API. Failures are answers, never thrown: a ``MultidocError`` becomes
/// the JSON error with its status (``APIFailure``).
struct APIHandlers: APIProtocol {
    let device: MultidocDevice

    func listDocuments(_ input: Operations.listDocuments.Input) async throws -> Operations.listDocuments.Output {
        .ok(.init(body: .json(.init(documents: await device.documents().map(Components.Schemas.Document.init)))))
    }

    func createDocument(_ input: Operations.createDocument.Input) async throws -> Operations.createDocument.Output {
        guard case .json(let body) = input.body else { return .default(statusCode: 400, .failure(.badRequest("expected a JSON body"))) }
        do {
            return .created(.init(body: .json(.init(try await device.create(named: body.name)))))
        } catch {
            return .default(statusCode: APIFailure(error).status, .failure(APIFailure(error)))
        }
    }

    func getDocument(_ input: Operations.getDocument.Input) async throws -> Operations.getDocument.Output {
        do {
            return .ok(.init(body: .json(.init(try await device.document(input.path.document)))))
        } catch {
            return .default(statusCode: APIFailure(error).status, .failure(APIFailure(error)))
        }
    }

    func renameDocument(_ input: Operations.renameDocument.Input) async throws -> Operations.renameDocument.Output {
        guard case .json(let body) = input.body else { return .default(statusCode: 400, .failure(.badRequest("expected a JSON body"))) }
        do {
            let document = try await device.document(input.path.document)
            try await device.rename(document.id, to: body.name)
            return .ok(.init(body: .json(.init(try await device.document(id: document.id)))))
        } catch {
            return .default(statusCode: APIFailure(error).status, .failure(APIFailure(error)))
        }
    }

    func deleteDocument(_ input: Operations.deleteDocument.Input) async throws -> Operations.deleteDocument.Output {
        do {
            try await device.delete(try await device.document(input.path.document).id)
            return .noContent(.init())
        } catch {
            return .default(statusCode: APIFailure(error).status, .failure(APIFailure(error)))
        }
    }

    func getText(_ input: Operations.getText.Input) async throws -> Operations.getText.Output {
        do {
            return .ok(.init(body: .json(.init(text: try await device.text(try await device.document(input.path.document).id)))))
        } catch {
            return .default(statusCode: APIFailure(error).status, .failure(APIFailure(error)))
        }
    }

    func putText(_ input: Operations.putText.Input) async throws -> Operations.putText.Output {
        guard case .json(let body) = input.body else { return .default(statusCode: 400, .failure(.badRequest("expected a JSON body"))) }
        do {
            let id = try await device.document(input.path.document).id
            try await device.replaceText(id, with: body.text, editedFrom: body.editedFrom)
            return .noContent(.init())
        } catch {
            return .default(statusCode: APIFailure(error).status, .failure(APIFailure(error)))
        }
    }

    func editText(_ input: Operations.editText.Input) async throws -> Operations.editText.Output {
        guard case .json(let edit) = input.body else { return .default(statusCode: 400, .failure(.badRequest("expected a JSON body"))) }
        do {
            let id = try await device.document(input.path.document).id
            let length = edit.length ?? 0
            let (end, overflow) = edit.at.addingReportingOverflow(length)
            guard edit.at >= 0 else { throw MultidocError(.invalid, BodyRules.position.expectation(of: "at")) }
            guard length >= 0, !overflow else {
                throw MultidocError(.invalid, BodyRules.length.expectation(of: "length"))
            }
            switch edit.kind {
            case .insert:
                guard let text = edit.text else { throw MultidocError(.invalid, "an insert needs `text`: the text to insert") }
                try await device.insert(text, at: edit.at, in: id)
            case .delete:
                try await device.delete(edit.at..<end, in: id)
            case .replace:
                try await device.replace(edit.at..<end, with: edit.text ?? "", in: id)
            }
            return .noContent(.init())
        } catch {
            return .default(statusCode: APIFailure(error).status, .failure(APIFailure(error)))
        }
    }

    func getHistory(_ input: Operations.getHistory.Input) async throws -> Operations.getHistory.Output {
        do {
            let saves = try await device.history(try await device.document(input.path.document).id)
            return .ok(.init(body: .json(.init(saves: saves.map {
                .init(number: Int64(clamping: $0.number), device: $0.device, committedAt: $0.committedAt, added: $0.added, removed: $0.removed)
            }))))
        } catch {
            return .default(statusCode: APIFailure(error).status, .failure(APIFailure(error)))
        }
    }

    func inspectDocument(_ input: Operations.inspectDocument.Input) async throws -> Operations.inspectDocument.Output {
        do {
            await device.inspect(try await device.document(input.path.document).id)
            return .noContent(.init())
        } catch {
            return .default(statusCode: APIFailure(error).status, .failure(APIFailure(error)))
        }
    }

    func restoreDocument(_ input: Operations.restoreDocument.Input) async throws -> Operations.restoreDocument.Output {
        guard case .json(let body) = input.body else { return .default(statusCode: 400, .failure(.badRequest("expected a JSON body"))) }
        do {
            return .created(.init(body: .json(.init(try await device.restore(body.document)))))
        } catch {
            return .default(statusCode: APIFailure(error).status, .failure(APIFailure(error)))
        }
    }

    func syncNow(_ input: Operations.syncNow.Input) async throws -> Operations.syncNow.Output {
        let summary = await device.syncNow()
        return .ok(.init(body: .json(.init(
            imported: summary.imported, exported: summary.exported, discovered: summary.discovered, problems: summary.problems))))
    }

    func getStatus(_ input: Operations.getStatus.Input) async throws -> Operations.getStatus.Output {
        let status = await device.status()
        return .ok(.init(body: .json(.init(
            device: status.device, deviceID: status.deviceID.uuidString.lowercased(), root: status.root, container: status.container,
            containerAvailable: status.containerAvailable, documents: status.documents, problems: status.problems))))
    }

    func getLatencies(_ input: Operations.getLatencies.Input) async throws -> Operations.getLatencies.Output {
        let latencies = await device.latencies()
        return .ok(.init(body: .json(.init(
            count: latencies.count, p50Ms: latencies.p50Ms, p90Ms: latencies.p90Ms, maxMs: latencies.maxMs,
            samples: latencies.samples.map {
                .init(at: $0.at, document: $0.document.uuidString.lowercased(), from: $0.from, oneWayMs: $0.oneWayMs, roundTripMs: $0.roundTripMs)
            }))))
    }

    func getLatencyPlot(_ input: Operations.getLatencyPlot.Input) async throws -> Operations.getLatencyPlot.Output {
        .ok(.init(body: .image_svg_plus_xml(HTTPBody(await device.latencies().svg))))
    }

    func getEvents(_ input: Operations.getEvents.Input) async throws -> Operations.getEvents.Output {
        // Subscribed before the answer goes out: a change made once the client has seen
        // `: ready` is in the feed.
        let changes = await device.changes()
        return .ok(.init(body: .text_event_hyphen_stream(ChangeFeed.body(changes))))
    }
}

extension Components.Responses._Error {
    static func failure(_ failure: APIFailure) -> Self {
        .init(body: .json(.init(error: failure.message, status: failure.status)))
    }
}

extension Components.Schemas.Document {
    init(_ document: Document) {
        self.init(
            id: document.id.uuidString.lowercased(), name: document.name, state: document.state,
            origin: document.origin == .created ? .created : .discovered, life: .init(document.life), viewable: document.viewable,
            downloadPercent: document.downloadPercent, modified: document.modified, problem: document.problem)
    }
}

extension Components.Schemas.Document.lifePayload {
    init(_ life: Document.Life) {
        switch life {
        case .listed: self = .listed
        case .previewed: self = .previewed
        case .downloading: self = .downloading
        case .downloaded: self = .downloaded
        case .damaged: self = .damaged
        case .unreadable: self = .unreadable
        case .trashed: self = .trashed
        case .deleted: self = .deleted
        }
    }
}
