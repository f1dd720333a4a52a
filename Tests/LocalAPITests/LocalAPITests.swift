import Foundation
import Testing
import TestSupport

/// `multidocd --local-api 0` run as separate processes; every request made with curl, as any
/// program on the machine would.
@Suite(.serialized, .offThePool) struct LocalAPITests {
    let folder: TemporaryDirectory
    var container: URL { folder.appending("container") }

    init() throws {
        folder = try TemporaryDirectory("local-api")
        try FileManager.default.createDirectory(at: container, withIntermediateDirectories: true)
    }

    /// Without the token, or with a wrong one, every path is refused: the API with JSON, the
    /// page with its login form. A document that does not exist is 404, a body over 1 MiB 413,
    /// a body that is not the JSON asked for 400; the token file is the user's alone.
    @Test func refusesWithoutTheTokenAndAnswersBadRequestsWithJSON() async throws {
        defer { folder.remove() }
        let daemon = try APIDaemon("A", in: folder, container: container)
        defer { daemon.stop() }
        try await daemon.waitUntilListening()

        let mode = try FileManager.default.attributesOfItem(atPath: daemon.root.appendingPathComponent("api-token").path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        for path in ["/api/documents", "/api/events", "/api/status", "/", "/api/nothing"] {
            let none = try daemon.request("GET", path, token: .some(nil))
            #expect(none.status == 401, "\(path) without a token: \(none)")
            let wrong = try daemon.request("GET", path, token: "0123")
            #expect(wrong.status == 401, "\(path) with a wrong token: \(wrong)")
        }
        #expect(try daemon.request("GET", "/api/documents", token: .some(nil)).body.contains("\"status\":401"))
        #expect(try daemon.request("GET", "/", token: .some(nil)).body.contains("<form"))
        #expect(try daemon.request("GET", "/api/documents").status == 200)

        let missing = try daemon.request("GET", "/api/documents/NoSuchDocument/text")
        #expect(missing.status == 404 && missing.body.contains("NoSuchDocument"), "\(missing)")
        let big = folder.appending("big.json")
        try Data(repeating: UInt8(ascii: "a"), count: (1 << 20) + 1).write(to: big)
        let tooLarge = try daemon.request("POST", "/api/documents", bodyFile: big)
        #expect(tooLarge.status == 413, "\(tooLarge)")
        let badJSON = try daemon.request("POST", "/api/documents", json: "{\"name\":")
        #expect(badJSON.status == 400 && badJSON.body.contains("\"error\""), "\(badJSON)")
        #expect(!badJSON.body.contains(daemon.token), "an error must not echo the token")
        let created = try daemon.request("POST", "/api/documents", json: #"{"name":"Notes"}"#)
        #expect(created.status == 201, "\(created)")
        let listed = try daemon.request("GET", "/api/documents")
        #expect(listed.body.contains(#""life" : "downloaded""#), "a document made here is downloaded: \(listed.body)")
        let outOfRange = try daemon.request("POST", "/api/documents/Notes/edits", json: #"{"kind":"delete","at":100000,"length":2}"#)
        #expect(outOfRange.status == 400, "\(outOfRange)")
        let reserved = try daemon.request("POST", "/api/documents", json: #"{"name":"document.json"}"#)
        #expect(reserved.status == 400, "\(reserved)")
        #expect(daemon.process.isRunning, "bad requests must never stop the daemon; log:\n\(daemon.logText)")
    }

    /// A body that is not what an edit or a save takes is refused 400 with one line that names
    /// the field and what it must be, or says the body is not JSON; never the decoder's words.
    @Test func badBodiesAreRefusedInPlainWords() async throws {
        defer { folder.remove() }
        let daemon = try APIDaemon("A", in: folder, container: container)
        defer { daemon.stop() }
        try await daemon.waitUntilListening()
        #expect(try daemon.request("POST", "/api/documents", json: #"{"name":"Notes"}"#).status == 201)
        let before = try daemon.request("GET", "/api/documents/Notes/text").body

        let at = "`at` must be a whole number from 0 to the text's length"
        let edits: [(body: String, error: String)] = [
            (#"{"kind":"ins","at":0,"text":"a"}"#, "`kind` must be one of insert, delete, replace"),
            (#"{"kind":"insert","at":99999999999999999999999,"text":"a"}"#, at),
            (#"{"kind":"insert","at":1.5,"text":"a"}"#, at),
            (#"{"kind":"insert","at":"0","text":"a"}"#, at),
            (#"{"kind":"insert","at":true,"text":"a"}"#, at),
            (#"{"kind":"insert","at":-1,"text":"a"}"#, at),
            (#"{"kind":"insert","text":"a"}"#, "`at` is missing; it must be a whole number from 0 to the text's length"),
            (#"{"kind":"delete","at":0,"length":-2}"#, "`length` must be a whole number from 0 up: how many characters to remove"),
            (#"{"kind":"insert","at":0,"text":5}"#, "`text` must be a string: the text to insert"),
            (#"{"kind":"insert","at":0}"#, "an insert needs `text`: the text to insert"),
            (#"["insert"]"#, "the body must be a JSON object, not an array"),
            (#"{"kind":"insert","#, "the body is not JSON; send a JSON object"),
        ]
        for edit in edits {
            let answer = try daemon.request("POST", "/api/documents/Notes/edits", json: edit.body)
            #expect(answer.status == 400, "\(edit.body): \(answer)")
            #expect(Self.error(in: answer.body) == edit.error, "\(edit.body): \(answer.body)")
        }
        let saves: [(body: String, error: String)] = [
            (#"{"editedFrom":""}"#, "`text` is missing; it must be a string: the document's new text"),
            (#"{"text":"new","editedFrom":3}"#, "`editedFrom` must be a string: the text the editor started from"),
            ("text", "the body is not JSON; send a JSON object"),
        ]
        for save in saves {
            let answer = try daemon.request("PUT", "/api/documents/Notes/text", json: save.body)
            #expect(answer.status == 400, "\(save.body): \(answer)")
            #expect(Self.error(in: answer.body) == save.error, "\(save.body): \(answer.body)")
        }
        #expect(try daemon.request("GET", "/api/documents/Notes/text").body == before, "nothing refused was saved")
    }

    /// The `error` field of an error answer.
    static func error(in body: String) -> String? {
        let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
        return object?["error"] as? String
    }

    /// The server's socket is bound to 127.0.0.1 and nothing else (the kernel's own table).
    @Test func listensOnLoopbackOnly() async throws {
        defer { folder.remove() }
        let daemon = try APIDaemon("A", in: folder, container: container)
        defer { daemon.stop() }
        try await daemon.waitUntilListening()
        let port = try #require(daemon.address.split(separator: ":").last.flatMap { Int($0) })
        let portHex = String(format: "%04X", port)
        var listening: [String] = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            let text = (try? String(contentsOfFile: table, encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 3, fields[3] == "0A", fields[1].hasSuffix(":" + portHex) else { continue }
                listening.append(String(fields[1]))
            }
        }
        #expect(listening == ["0100007F:" + portHex], "listening on \(listening)")
    }

    /// An edit through A's API reaches B: B's change feed shows the import, and B's API the text.
    @Test func anEditThroughTheAPIReachesThePeerAndItsChangeFeed() async throws {
        defer { folder.remove() }
        let a = try APIDaemon("A", in: folder, container: container)
        let b = try APIDaemon("B", in: folder, container: container)
        defer { a.stop(); b.stop() }
        try await a.waitUntilListening()
        try await b.waitUntilListening()
        let feedFile = folder.appending("feed-B.txt")
        let feed = try b.feed(into: feedFile)
        defer { feed.terminate() }
        let feedText = { (try? String(contentsOf: feedFile, encoding: .utf8)) ?? "" }
        #expect(await eventually(timeout: .seconds(20)) { feedText().contains(": ready") }, "the feed did not open")

        let created = try a.request("POST", "/api/documents", json: #"{"name":"Shared"}"#)
        #expect(created.status == 201, "\(created)")
        let id = try #require(created.body.firstMatch(of: /"id" : "([0-9a-f-]{36})"/).map { String($0.1) }, "\(created.body)")
        #expect(await eventually(timeout: .seconds(20)) { feedText().contains(#""kind":"viewable""#) && feedText().contains(id) }, "\(feedText())")

        // B has all A wrote so far (so its imports are in the feed); what comes after is the edit's.
        let aText = try a.request("GET", "/api/documents/\(id)/text").body
        #expect(await eventually(timeout: .seconds(20)) { (try? b.request("GET", "/api/documents/\(id)/text").body) == aText })
        let offset = feedText().utf8.count
        let edit = try a.request("POST", "/api/documents/\(id)/edits", json: #"{"kind":"insert","at":0,"text":"typed through the API. "}"#)
        #expect(edit.status == 204, "\(edit)")
        let imported = #""document":"\#(id)","from":["A"],"kind":"imported""#
        #expect(await eventually(timeout: .seconds(20)) { String(decoding: Array(feedText().utf8.dropFirst(offset)), as: UTF8.self).contains(imported) },
                "B's feed showed no import of the edit:\n\(feedText())")
        let text = try b.request("GET", "/api/documents/\(id)/text")
        #expect(text.status == 200 && text.body.contains("typed through the API. "), "\(text)")

        // A stop with a feed open is still graceful: the feed ends and the daemon exits 0.
        b.stop()
        #expect(b.process.terminationStatus == 0, "\(b.logText)")
        #expect(await eventually(timeout: .seconds(20)) { !feed.isRunning }, "the change feed outlived its daemon")
    }
}
