@testable import Engine
import FileIO
import Foundation
import Model
import Storage
import Testing
import TestSupport

/// The catalog file: a command that changes one document appends one line, a reader takes the
/// last line of each document, a torn line costs only itself, and the file is written whole
/// again once it holds more than twice the lines it needs.
@Suite struct DocumentCatalogTests {
    let folder: TemporaryDirectory
    let root: DeviceRoot

    init() throws {
        folder = try TemporaryDirectory("catalog")
        root = DeviceRoot(url: folder.appending("root"))
        try FileManager.default.createDirectory(at: root.documentsDirectory, withIntermediateDirectories: true)
    }

    func record(_ index: Int, name: String) throws -> LocalDocumentRecord {
        let id = try #require(DocumentID(String(format: "00000000-0000-4000-8000-%012d", index)))
        let device = try #require(DeviceID("11111111-1111-4111-8111-111111111111"))
        return LocalDocumentRecord(
            id: id, name: try DocumentName(name), store: .sqlite, origin: .created, location: .cloud,
            createdAt: Date(timeIntervalSince1970: 1_700_000_000), createdBy: device, container: nil)
    }

    func lineCount() throws -> Int {
        try String(contentsOf: root.catalogURL, encoding: .utf8).split(separator: "\n").count
    }

    @Test func oneChangeAppendsOneLineAndTheLastLineWins() throws {
        defer { folder.remove() }
        var catalog = DocumentCatalog()
        var records: [LocalDocumentRecord] = []
        for index in 0..<20 {
            let record = try record(index, name: "Doc\(index)")
            try root.save(record, durable: false)
            records.append(record)
        }
        catalog.refresh(root)
        try catalog.save(root.catalogURL)
        let whole = try lineCount()
        #expect(whole == 21)  // the header and one line per document

        // A new process renames one document and forgets another: two lines appended, and no
        // table of every line built for it.
        var next = DocumentCatalog.load(root.catalogURL)
        var renamed = records[3]
        renamed.name = try DocumentName("Renamed")
        try root.save(renamed, durable: false)
        next.wrote(renamed, root)
        next.forget(records[7].id)
        try next.save(root.catalogURL)
        #expect(try lineCount() == whole + 2)

        var third = DocumentCatalog.load(root.catalogURL)
        #expect(third.count == 19)
        #expect(!third.ids.contains(records[7].id))
        #expect(third.names(startingWith: "Ren") == ["Renamed"])
        #expect(!third.names(startingWith: "Doc").contains("Doc3"))
        #expect(third.names(startingWith: "Doc").count == 18)
        #expect(third.candidates(named: "Renamed") == [records[3].id])
    }

    @Test func aTornLineCostsOnlyItself() throws {
        defer { folder.remove() }
        var catalog = DocumentCatalog()
        for index in 0..<5 { try root.save(try record(index, name: "Doc\(index)"), durable: false) }
        catalog.refresh(root)
        try catalog.save(root.catalogURL)
        // A crash in the middle of an append: half a line, no newline.
        try AtomicFile.append(Data("00000000-0000-4000-8000-000000000002\t12:34".utf8), to: root.catalogURL)
        var next = DocumentCatalog.load(root.catalogURL)
        #expect(next.count == 5)
        // The torn line stands for document 2 until a save appends a good one after it.
        next.refresh(root)
        try next.save(root.catalogURL)
        var third = DocumentCatalog.load(root.catalogURL)
        #expect(third.count == 5)
        #expect(Set(third.names(startingWith: "")) == Set((0..<5).map { "Doc\($0)" }))
    }

    @Test func aFileOfMostlyOldLinesIsWrittenWholeAgain() throws {
        defer { folder.remove() }
        var records: [LocalDocumentRecord] = []
        for index in 0..<10 {
            let record = try record(index, name: "Doc\(index)")
            try root.save(record, durable: false)
            records.append(record)
        }
        var catalog = DocumentCatalog()
        catalog.refresh(root)
        try catalog.save(root.catalogURL)
        // Each round renames every document: appended while the file stays under twice what
        // it needs (plus some slack), then written whole.
        for round in 0..<12 {
            var next = DocumentCatalog.load(root.catalogURL)
            for var record in records {
                record.name = try DocumentName("Doc\(record.id.description.suffix(2))-\(round)")
                try root.save(record, durable: false)
                next.wrote(record, root)
            }
            try next.save(root.catalogURL)
            // Written whole: the header and 10 lines; appended up to twice that and some slack.
            #expect(try lineCount() <= 2 * 11 + 64)
        }
        var last = DocumentCatalog.load(root.catalogURL)
        #expect(last.count == 10)
        #expect(last.names(startingWith: "").allSatisfy { $0.hasSuffix("-11") })
    }
}
