import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Checks, before a run starts, that an output file can be written, and says why not in a person's words.
///
/// Nothing is created: an existing file must be writable, a new one needs a writable, existing directory. The
/// writer itself still reports failures that appear later (a full disk).
public enum OutputPathCheck {
    /// Why `path` cannot be written, or nil when it can.
    public static func problem(writing path: String) -> String? {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            if isDirectory.boolValue { return "'\(path)' is a directory" }
            return access(path, W_OK) == 0 ? nil : "'\(path)' is not writable (\(String(cString: strerror(errno))))"
        }
        let directory = (path as NSString).deletingLastPathComponent
        let parent = directory.isEmpty ? "." : directory
        guard FileManager.default.fileExists(atPath: parent, isDirectory: &isDirectory) else {
            return "the folder '\(parent)' does not exist"
        }
        guard isDirectory.boolValue else { return "'\(parent)' is a file, not a folder" }
        guard access(parent, W_OK) == 0 else {
            return "the folder '\(parent)' is not writable (\(String(cString: strerror(errno))))"
        }
        return nil
    }

    /// Whether two paths name one file, however they are spelled (`./a`, an absolute path, a symbolic link, a
    /// hard link): the same device and inode when both exist, else the same path once the folder is resolved.
    public static func sameFile(_ a: String, _ b: String) -> Bool {
        var first = stat(), second = stat()
        if stat(a, &first) == 0, stat(b, &second) == 0 {
            return first.st_dev == second.st_dev && first.st_ino == second.st_ino
        }
        return canonical(a) == canonical(b)
    }

    /// The first pair of `paths` (each with the option that gave it) that names one file.
    public static func firstClash(_ paths: [(option: String, path: String)]) -> (String, String)? {
        for i in paths.indices {
            for j in paths.indices where j > i && sameFile(paths[i].path, paths[j].path) {
                return (paths[i].option, paths[j].option)
            }
        }
        return nil
    }

    /// `path` absolute, with its folder's symbolic links and `.`/`..` resolved when the folder exists.
    private static func canonical(_ path: String) -> String {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        let folder = url.deletingLastPathComponent().path
        guard let resolved = realpath(folder, nil) else { return url.path }
        defer { free(resolved) }
        return URL(fileURLWithPath: String(cString: resolved)).appendingPathComponent(url.lastPathComponent).path
    }
}
