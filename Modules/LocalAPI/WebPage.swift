import HTTPTypes
import Hummingbird
import NIOCore

/// The page the daemon serves at `/`: the seed app's master list and detail, kept live by the
/// change feed, with the editor saving as you type and the latency plot. Plain HTML, CSS and a
/// little JavaScript, all in this binary (``script``); nothing is fetched from elsewhere.
enum WebPage {
    static func response() -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        headers[.contentSecurityPolicy] = "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self'"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: page)))
    }

    /// The form asked for when a request has no token (or a wrong one).
    static func login(reason: String) -> String {
        """
        <!doctype html><html><head><meta charset="utf-8"><title>multidoc: token needed</title>\(style)</head>
        <body><h1>multidoc</h1><p class="problem">\(reason): this device's page needs its token.</p>
        <form method="get" action="/"><label>Token (the contents of &lt;root&gt;/api-token)
        <input id="token" name="token" type="password" autocomplete="off" size="70"></label>
        <button id="login" type="submit">Open</button></form></body></html>
        """
    }

    static let style = """
        <style>
        body { font: 15px system-ui, sans-serif; margin: 1.5em; color: #222; }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; padding: .3em .6em; border-bottom: 1px solid #ddd; }
        tr.doc { cursor: pointer; } tr.doc:hover { background: #f3f6ff; }
        tr.grey td { color: #999; }
        textarea { width: 100%; height: 16em; font: 14px monospace; }
        .problem { color: #b00; } .muted { color: #777; font-size: 90%; }
        #plot svg, #plot img { max-width: 100%; }
        button { margin-right: .5em; }
        </style>
        """

    static let page = """
        <!doctype html>
        <html><head><meta charset="utf-8"><title>multidoc</title>\(style)</head>
        <body>
        <h1 id="title">multidoc</h1>
        <p class="muted"><span id="device"></span> · <span id="feed">connecting…</span></p>
        <section id="master">
          <p><input id="new-name" placeholder="new document name"> <button id="new">New</button> <button id="sync">Sync now</button></p>
          <table><thead><tr><th>Name</th><th>State</th><th>Origin</th><th>Viewable</th><th>Downloaded</th></tr></thead>
          <tbody id="documents"></tbody></table>
          <h2>Latencies</h2><div id="plot" class="muted">no samples yet</div>
        </section>
        <section id="detail" hidden>
          <p><button id="back">← Documents</button> <span id="detail-state" class="muted"></span></p>
          <h2 id="detail-name"></h2>
          <textarea id="editor" spellcheck="false"></textarea>
          <p class="muted" id="saved">saved</p>
        </section>
        <script>\(script)</script>
        </body></html>
        """
}
