import FileIO
import Foundation

/// Asking the user on the terminal: a question on stderr, the answer from standard input.
public enum TerminalPrompt {
    /// Asks; an empty answer (or end of input) takes the default.
    public static func ask(_ question: String, default value: String) -> String {
        FileHandle.standardError.write(Data("\(question) [\(value)]: ".utf8))
        guard let line = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces), !line.isEmpty else { return value }
        return line
    }

    /// Asks a yes-or-no question; anything but `y` or `yes` is no.
    public static func confirm(_ question: String) -> Bool {
        FileHandle.standardError.write(Data("\(question) [y/N]: ".utf8))
        guard let line = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces).lowercased() else { return false }
        return line == "y" || line == "yes"
    }

    /// Lets the user edit `text` in `$VISUAL`, `$EDITOR` or vi, and returns what they saved.
    /// The text is private: a folder only this user can enter, a file only this user can read.
    /// - Throws: ``AppError`` when the editor exits with a failure or leaves no file to read
    ///   back (nothing is to be saved), or the file error when the text cannot be written.
    public static func edit(_ text: String, environment: [String: String]) throws -> String {
        let editor = environment["VISUAL"] ?? environment["EDITOR"] ?? "vi"
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("multidoc-edit-\(UUID().uuidString)", isDirectory: false)
        try AtomicFile.makeDirectory(folder)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("text.txt", isDirectory: false)
        try AtomicFile.write(Data(text.utf8), to: file)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "\(editor) \"$1\"", "sh", file.path]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw AppError(.failure, "the editor (\(editor)) exited with \(process.terminationStatus); nothing saved") }
        do {
            return String(decoding: try AtomicFile.readBytes(file), as: UTF8.self)
        } catch {
            let why = error.isMissing ? "the file is gone" : error.detail ?? String(cString: strerror(error.code))
            throw AppError(.failure, "the editor (\(editor)) left no text to read at \(file.path) (\(why)); nothing saved")
        }
    }
}
