extension WebPage {
    /// The page's behaviour: the master list and the open document are fetched again when the
    /// change feed says something changed; the editor saves 150 ms after the last key, sending
    /// the text it started from so a peer's edit made meanwhile is kept (a three-way merge).
    static let script = #"""
        const $ = (id) => document.getElementById(id);
        let open = null, base = "", saving = false, pending = false, stale = false, listTimer = null;
        async function api(method, path, body) {
          const response = await fetch(path, { method, credentials: "same-origin",
            headers: body === undefined ? {} : { "Content-Type": "application/json" },
            body: body === undefined ? undefined : JSON.stringify(body) });
          if (response.status === 401) { location.reload(); throw new Error("token"); }
          if (!response.ok) { const e = await response.json().catch(() => ({})); throw new Error(e.error || response.status); }
          return response.status === 204 ? null : response.json();
        }
        function cell(row, text) { const td = document.createElement("td"); td.textContent = text; row.appendChild(td); }
        async function loadList() {
          const { documents } = await api("GET", "/api/documents");
          const body = $("documents"); body.textContent = "";
          for (const d of documents) {
            const row = document.createElement("tr");
            row.className = "doc" + (d.viewable ? "" : " grey");
            row.dataset.id = d.id; row.dataset.name = d.name;
            cell(row, d.name); cell(row, d.state); cell(row, d.origin);
            cell(row, d.viewable ? "yes" : "no"); cell(row, d.life === "previewed" ? "preview" : d.downloadPercent + "%");
            row.onclick = () => { location.hash = "#/doc/" + d.id; };
            body.appendChild(row);
            if (open && open.id === d.id) { $("detail-name").textContent = d.name; $("detail-state").textContent = d.state; }
          }
        }
        function scheduleList() { clearTimeout(listTimer); listTimer = setTimeout(() => loadList().catch(show), 30); }
        async function loadPlot() {
          const response = await fetch("/api/latencies.svg", { credentials: "same-origin" });
          const svg = await response.text();
          if (svg) $("plot").innerHTML = svg;
        }
        async function loadText() {
          if (!open) return;
          const { text } = await api("GET", "/api/documents/" + open.id + "/text");
          const editor = $("editor");
          if (editor.value === base) {
            const at = editor.selectionStart, atEnd = at === editor.value.length;
            editor.value = text; base = text;
            const caret = atEnd ? text.length : Math.min(at, text.length);
            editor.setSelectionRange(caret, caret);
          } else {
            stale = true;  // typed meanwhile: the save merges, then the text is read again
          }
        }
        async function save() {
          if (!open) return;
          if (saving) { pending = true; return; }
          const text = $("editor").value;
          if (text === base) return;
          saving = true; $("saved").textContent = "saving…";
          try {
            await api("PUT", "/api/documents/" + open.id + "/text", { text, editedFrom: base });
            base = text; $("saved").textContent = "saved";
          } catch (e) { show(e); } finally { saving = false; }
          if (pending) { pending = false; save(); } else if (stale) { stale = false; loadText().catch(show); }
        }
        let typing = null;
        $("editor").addEventListener("input", () => { $("saved").textContent = "editing…"; clearTimeout(typing); typing = setTimeout(save, 150); });
        function show(error) { $("saved").textContent = String(error.message || error); }
        async function route() {
          const match = location.hash.match(/^#\/doc\/([0-9a-f-]+)$/);
          if (match) {
            open = { id: match[1] }; base = ""; $("editor").value = "";
            $("master").hidden = true; $("detail").hidden = false;
            try {
              const d = await api("GET", "/api/documents/" + open.id);
              $("detail-name").textContent = d.name; $("detail-state").textContent = d.state;
              await api("POST", "/api/documents/" + open.id + "/inspect");
              await loadText();
            } catch (e) { show(e); }
          } else {
            open = null; $("master").hidden = false; $("detail").hidden = true;
            await loadList(); await loadPlot();
          }
        }
        $("back").onclick = () => { location.hash = "#/"; };
        $("new").onclick = async () => {
          const name = $("new-name").value.trim();
          try { await api("POST", "/api/documents", name ? { name } : {}); $("new-name").value = ""; } catch (e) { alert(e.message); }
          scheduleList();
        };
        $("sync").onclick = () => api("POST", "/api/sync").then(scheduleList);
        window.addEventListener("hashchange", route);
        api("GET", "/api/status").then((s) => { $("device").textContent = s.device + " · " + (s.container || "no container"); });
        const feed = new EventSource("/api/events");
        feed.addEventListener("open", () => { $("feed").textContent = "live"; });
        feed.addEventListener("error", () => { $("feed").textContent = "reconnecting…"; });
        feed.addEventListener("change", (event) => {
          const change = JSON.parse(event.data);
          scheduleList();
          if (open && change.document === open.id && (change.kind === "imported" || change.kind === "viewable")) loadText().catch(show);
          if (!open && change.kind === "imported") loadPlot().catch(() => {});
          if (open && change.document === open.id && change.kind === "deleted") location.hash = "#/";
        });
        route();
        """#
}
