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

    /// Every field of a line reads back as written (a folder, a container, a quiet mark with
    /// several stamps, devices and applied logs, or none), and a line damaged anywhere is not
    /// trusted rather than read as something else.
    @Test func everyFieldOfALineReadsBackAndADamagedLineIsRefused() throws {
        defer { folder.remove() }
        let device = try #require(DeviceID("11111111-1111-4111-8111-111111111111"))
        let other = try #require(DeviceID("22222222-2222-4222-8222-222222222222"))
        var filed = try record(1, name: "Tab-free name · ünïcødé")
        filed.folder = try DocumentName("Receipts")
        filed.container = UUID(uuidString: "33333333-3333-4333-8333-333333333333")
        let mark = QuietMark(
            stamps: [FileStamp(modified: 1_795_452_125_646_345_936, size: 4096, links: 3), FileStamp(modified: -1, size: 0),
                     FileStamp(modified: 12, size: 57_344)],
            devices: [device, other], applied: [device: 7, other: UInt64.max], viewable: true,
            modified: Date(timeIntervalSince1970: 1_795_452_125.648), ownLogs: 3, preview: false)
        let entries = [
            DocumentCatalog.Entry(record: filed, stamp: FileIdentity(inode: 42, modified: -5, size: 298), quiet: mark),
            DocumentCatalog.Entry(record: try record(2, name: "Plain"), stamp: FileIdentity(inode: 1, modified: 2, size: 3), quiet: nil),
            DocumentCatalog.Entry(
                record: try record(3, name: "Preview"), stamp: FileIdentity(inode: 1, modified: 2, size: 3),
                quiet: QuietMark(stamps: [], devices: [], applied: [:], viewable: false, modified: nil, ownLogs: 0, preview: true)),
        ]
        for entry in entries {
            let line = Array(entry.line.utf8)
            #expect(DocumentCatalog.Entry(line: line[...]) == entry)
            // A line of an earlier version (no folder field) reads as one without a folder.
            if entry.record.folder == nil, entry.line.hasSuffix("\t-") {
                #expect(DocumentCatalog.Entry(line: Array(entry.line.dropLast(2).utf8)[...]) == entry)
            }
        }
        let good = entries[0].line
        let fields = good.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        var damaged: [String] = [
            "", good + "\textra", good + "\t", String(good.dropFirst()), fields.prefix(9).joined(separator: "\t"),
        ]
        // Each field replaced by something that is not one.
        for (index, bad) in [(0, "not-a-uuid"), (1, "42:-5"), (1, "42:-5:298:1"), (1, "x:1:2"), (2, ""), (3, "oracle"),
                             (4, "found"), (5, "moon"), (6, "soon"), (7, "nobody"), (8, "nowhere"), (10, "Receipts")] {
            var changed = fields
            changed[index] = bad
            damaged.append(changed.joined(separator: "\t"))
        }
        for line in damaged {
            #expect(DocumentCatalog.Entry(line: Array(line.utf8)[...]) == nil, "read a damaged line: \(line)")
        }
        // A damaged quiet mark only loses the mark.
        for bad in ["1;2", "1;-;1,2,3,4;;0;0;", "1;-;;\(device)=x;0;0;", "1;-;;;0;0;nobody", "1;-;;;x;0;", "1;-;;;0;0;;"] {
            var changed = fields
            changed[9] = bad
            let read = DocumentCatalog.Entry(line: Array(changed.joined(separator: "\t").utf8)[...])
            #expect(read?.record == filed)
            #expect(read?.quiet == nil, "read a damaged mark: \(bad)")
        }
    }

    /// A record file written moments ago is read on every look (a rewrite in the same clock
    /// tick would not change its stamp): bytes that changed give the new record, and the same
    /// bytes give the record they decoded to.
    @Test func aRecordRewrittenWhileItsStampIsRecentIsReadAgain() throws {
        defer { folder.remove() }
        var catalog = DocumentCatalog()
        let first = try record(1, name: "Draft")
        try root.save(first, durable: false)
        #expect(catalog.refresh(first.id, root)?.name == first.name)
        #expect(catalog.refresh(first.id, root)?.name == first.name)
        // The same length, so only the bytes tell the files apart.
        let renamed = try record(1, name: "Final")
        try root.save(renamed, durable: false)
        #expect(catalog.refresh(renamed.id, root)?.name == renamed.name)
        try root.save(first, durable: false)
        #expect(catalog.refresh(first.id, root)?.name == first.name)
        #expect(catalog.refresh(first.id, root) == first)
    }
}
