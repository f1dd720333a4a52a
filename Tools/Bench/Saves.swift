#if canImport(Glibc)
import Glibc
#endif
import Engine
import FileIO
import Foundation
import Model

/// What one small save costs against what the disk costs: a one-character append into a
/// document of a given length, in process, through the engine as the CLI saves (a cloud
/// document, FastSave on: the save returns once its log is durable in the container), next to a
/// durable write of a 200-byte file (write, fsync, rename, fsync of the folder) measured in the
/// same run; and a second device B on the same container, the document in view, importing
/// each of those saves (a targeted pass of the one document, in process).
enum SaveCost {
    struct Result {
        /// Median milliseconds of a 200-byte durable file write.
        var referenceMs: Double
        /// Median milliseconds of a one-character save, per document length.
        var saveMs: [Int: Double]
        /// Median milliseconds of B's import of one such save, per document length.
        var importMs: [Int: Double]
    }

    static func measure(folder: URL, store: String, lengths: [Int], saves: Int) async throws -> Result {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var saveMs: [Int: Double] = [:], importMs: [Int: Double] = [:]
        var references: [Double] = []
        for length in lengths {
            let space = try Workspace(folder.appendingPathComponent("save-\(length)"))
            let (_, library) = try space.library("A", store: store)
            await library.sync()
            let document = try await library.create(name: try DocumentName("Long\(length)"))
            // The document at its length: one whole text handed over, once.
            let line = "The quick brown fox jumps over the lazy dog, again and again and again.\n"
            var text = String(repeating: line, count: length / line.unicodeScalars.count + 1)
            text = String(text.unicodeScalars.prefix(length))
            try await library.setText(document.id, text)
            let (_, reader) = try space.library("B", store: store)
            await reader.sync()
            // B has the document in view (its detail open), as a reader watching it has: the
            // store stays open between imports instead of being opened and loaded for each.
            await reader.inspect(document.id)
            var samples: [Double] = [], imports: [Double] = []
            for index in 0..<(saves + 3) {
                // The reference right before each save, so both see the disk as it is then.
                references.append(try referenceWrite(folder: folder, index: index))
                let start = ContinuousClock.now
                try await library.appendText(document.id, "x")
                if index >= 3 { samples.append(elapsedSeconds(since: start) * 1000) }
                let imported = ContinuousClock.now
                await reader.sync(documents: [document.id])
                if index >= 3 { imports.append(elapsedSeconds(since: imported) * 1000) }
            }
            saveMs[length] = median(samples)
            importMs[length] = median(imports)
            await library.closeAll()
            await reader.closeAll()
        }
        return Result(referenceMs: median(references), saveMs: saveMs, importMs: importMs)
    }

    /// One durable write of a 200-byte file, in milliseconds.
    static func referenceWrite(folder: URL, index: Int) throws -> Double {
        let url = folder.appendingPathComponent("reference-\(index % 4).bin")
        let data = Data(repeating: UInt8(truncatingIfNeeded: index), count: 200)
        let start = ContinuousClock.now
        try AtomicFile.write(data, to: url, durability: .durable)
        return elapsedSeconds(since: start) * 1000
    }

    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted[sorted.count / 2]
    }
}
