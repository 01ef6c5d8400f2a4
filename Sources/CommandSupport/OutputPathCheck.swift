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
        guard FileManager.default.fileExists(atPath: parent, isDirectory: &isDirectory), isDirectory.boolValue else {
            return "the folder '\(parent)' does not exist"
        }
        guard access(parent, W_OK) == 0 else {
            return "the folder '\(parent)' is not writable (\(String(cString: strerror(errno))))"
        }
        return nil
    }
}
