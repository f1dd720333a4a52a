import Foundation
import Model
import Settings
import Storage
import Sync

/// What happened to one document when UseCloud changed.
public struct UseCloudChange: Sendable, Equatable {
    public var name: String
    public var id: DocumentID
    public var movedTo: DocumentLocation?
    public var problem: String?
}

extension DocumentLibrary {
    /// Brings every document in line with UseCloud (seeds 002 and 004): with UseCloud on, local
    /// documents move to the cloud; with it off, `choice` is asked for each ubiquitous document
    /// (keep using the cloud, keep a local copy and remove it from the cloud, or keep a local
    /// copy and leave the cloud copy as a separate document).
    public func applyUseCloud(choice: @Sendable (DocumentSummary) -> MoveToLocalChoice) async -> [UseCloudChange] {
        var changes: [UseCloudChange] = []
        for summary in await list() {
            if settings.useCloud, summary.location == .local {
                do {
                    try await moveToCloud(summary.id)
                    changes.append(UseCloudChange(name: summary.name, id: summary.id, movedTo: .cloud))
                } catch {
                    changes.append(UseCloudChange(name: summary.name, id: summary.id, problem: "\(error)"))
                }
            } else if !settings.useCloud, summary.location == .cloud {
                let decision = choice(summary)
                guard decision != .keepUsingCloud else { continue }
                do {
                    try await moveToLocal(summary.id, choice: decision)
                    changes.append(UseCloudChange(name: summary.name, id: summary.id, movedTo: .local))
                } catch {
                    changes.append(UseCloudChange(name: summary.name, id: summary.id, problem: "\(error)"))
                }
            }
        }
        return changes
    }
}
