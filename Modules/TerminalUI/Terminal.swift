import CNcurses
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The ncurses screen: set up once, drawn from the main actor only (curses is not
/// thread-safe), and always given back to the shell by ``stop()``.
@MainActor
public final class Terminal {
    /// A terminal not taken over yet (``start()`` does).
    public init() {}

    private var window: UnsafeMutablePointer<WINDOW>?
    private var colors = false

    /// Lines and columns right now (updated by ncurses on resize).
    public var size: (lines: Int, columns: Int) {
        guard let window else { return (24, 80) }
        return (Int(multidoc_maxy(window)), Int(multidoc_maxx(window)))
    }

    /// Takes over the terminal: no echo, keys one at a time, keypad keys decoded, reads that
    /// time out after 100 ms so the loop also notices engine events without a key press.
    /// - Throws: ``TerminalError`` if standard input or output is not a terminal or TERM is unusable.
    public func start() throws(TerminalError) {
        Self.useUTF8Locale()
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
            throw TerminalError(description: "multidoc-tui needs a terminal on standard input and output (use the multidoc CLI in scripts)")
        }
        guard multidoc_newterm() != nil, let window = multidoc_stdscr() else {
            let term = ProcessInfo.processInfo.environment["TERM"] ?? "(unset)"
            throw TerminalError(description: "cannot set up the terminal for TERM=\(term); check TERM and the terminfo database")
        }
        self.window = window
        cbreak()
        noecho()
        nonl()
        keypad(window, true)
        wtimeout(window, 100)
        set_escdelay(25)
        curs_set(0)
        if has_colors() {
            start_color()
            let background: Int16 = use_default_colors() == multidoc_ok() ? -1 : Int16(COLOR_BLACK)
            init_pair(1, Int16(COLOR_WHITE), Int16(COLOR_BLUE))
            init_pair(2, Int16(COLOR_RED), background)
            init_pair(3, Int16(COLOR_GREEN), background)
            init_pair(4, Int16(COLOR_CYAN), background)
            colors = true
        }
    }

    /// Gives the terminal back (endwin). Safe to call more than once.
    public func stop() {
        guard window != nil else { return }
        if !isendwin() {
            curs_set(1)
            endwin()
        }
        window = nil
    }

    /// ncursesw decodes typed UTF-8 and draws it only under a UTF-8 locale; take the user's
    /// locale, and fall back to C.UTF-8 when it is not UTF-8 (a bare `C` in tmux or ssh).
    private static func useUTF8Locale() {
        setlocale(multidoc_lc_all(), "")
        let codeset = nl_langinfo(nl_item(CODESET)).map { String(cString: $0) } ?? ""
        if codeset.uppercased().replacingOccurrences(of: "-", with: "") != "UTF8" {
            setlocale(LC_CTYPE, "C.UTF-8")
        }
    }

    // MARK: Drawing

    /// Blanks the screen before a frame is drawn.
    public func clear() {
        guard let window else { return }
        werase(window)
    }

    /// Draws `text` at (line, column), clipped to `width` display columns (default: to the
    /// right edge), with control characters shown as spaces.
    public func draw(_ text: String, line: Int, column: Int, width: Int? = nil, style: Style = []) {
        guard let window else { return }
        let (lines, columns) = size
        guard line >= 0, line < lines, column >= 0, column < columns else { return }
        let room = min(width ?? (columns - column), columns - column)
        guard room > 0 else { return }
        let clipped = TextWidth.clip(text, to: room)
        let attributes = attributes(for: style)
        multidoc_attrset(window, attributes)
        multidoc_mvaddstr(window, Int32(line), Int32(column), clipped)
        multidoc_attrset(window, multidoc_a_normal())
    }

    /// Fills a whole line with `text` padded by spaces (bars and the selected row).
    public func drawBar(_ text: String, line: Int, style: Style) {
        let columns = size.columns
        draw(TextWidth.pad(text, to: columns), line: line, column: 0, width: columns, style: style)
    }

    /// Shows the cursor at (line, column), or hides it with nil.
    public func placeCursor(_ position: (line: Int, column: Int)?) {
        guard let window else { return }
        if let position {
            curs_set(1)
            wmove(window, Int32(position.line), Int32(position.column))
        } else {
            curs_set(0)
        }
    }

    /// Shows what was drawn since the last refresh.
    public func refresh() {
        guard let window else { return }
        wrefresh(window)
    }

    private func attributes(for style: Style) -> Int32 {
        var value: Int32 = multidoc_a_normal()
        if style.contains(.bold) { value |= multidoc_a_bold() }
        if style.contains(.dim) { value |= multidoc_a_dim() }
        if style.contains(.reverse) { value |= multidoc_a_reverse() }
        if style.contains(.underline) { value |= multidoc_a_underline() }
        if colors {
            if style.contains(.title) { value |= multidoc_color_pair(1) }
            else if style.contains(.error) { value |= multidoc_color_pair(2) | multidoc_a_bold() }
            else if style.contains(.good) { value |= multidoc_color_pair(3) }
            else if style.contains(.accent) { value |= multidoc_color_pair(4) }
        } else {
            if style.contains(.title) { value |= multidoc_a_reverse() }
            if style.contains(.error) { value |= multidoc_a_bold() }
        }
        return value
    }

    // MARK: Keys

    /// The next key, or nil when none came within 100 ms (or a signal interrupted the wait).
    public func readKey() -> Key? {
        guard let window else { return nil }
        var value: wint_t = 0
        let result = wget_wch(window, &value)
        if result == multidoc_key_code_yes() { return Self.functionKey(Int32(bitPattern: value)) }
        guard result == multidoc_ok() else { return nil }
        switch value {
        case 10, 13: return .enter
        case 27: return .escape
        case 8, 127: return .backspace
        case 9: return .tab
        default:
            guard let scalar = Unicode.Scalar(value) else { return .other(Int32(bitPattern: value)) }
            return .character(scalar)
        }
    }

    private static func functionKey(_ code: Int32) -> Key {
        switch code {
        case multidoc_key_up(): .up
        case multidoc_key_down(): .down
        case multidoc_key_left(): .left
        case multidoc_key_right(): .right
        case multidoc_key_home(): .home
        case multidoc_key_end(): .end
        case multidoc_key_npage(): .pageDown
        case multidoc_key_ppage(): .pageUp
        case multidoc_key_enter(): .enter
        case multidoc_key_backspace(): .backspace
        case multidoc_key_dc(): .delete
        case multidoc_key_resize(): .resize
        default:
            if let number = (1...12).first(where: { multidoc_key_f(Int32($0)) == code }) { .function(number) } else { .other(code) }
        }
    }
}

/// What the terminal could not do, in words a user can act on.
public struct TerminalError: Error, CustomStringConvertible {
    public let description: String

    public init(description: String) { self.description = description }
}
