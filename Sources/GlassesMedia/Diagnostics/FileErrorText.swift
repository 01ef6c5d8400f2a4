import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file error in a person's words: the system's reason ("no space left on device", "is a directory"), never
/// Foundation's domain and number ("NSCocoaErrorDomain error 256").
public enum FileErrorText {
    /// Why `error` (thrown by FileHandle, Data or FileManager) happened, in lower case.
    public static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        // On Linux the underlying error is often a Swift `POSIXError`, which `as? NSError` does not match.
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? any Error {
            if let posixError = underlying as? POSIXError { return posix(posixError.code.rawValue) }
            let bridged = underlying as NSError
            if bridged.domain == NSPOSIXErrorDomain { return posix(Int32(bridged.code)) }
        }
        if nsError.domain == NSPOSIXErrorDomain { return posix(Int32(nsError.code)) }
        if nsError.domain == NSCocoaErrorDomain {
            switch nsError.code {
            case NSFileWriteOutOfSpaceError: return posix(ENOSPC)
            case NSFileReadNoSuchFileError, NSFileNoSuchFileError: return posix(ENOENT)
            case NSFileReadNoPermissionError, NSFileWriteNoPermissionError: return posix(EACCES)
            case NSFileWriteVolumeReadOnlyError: return posix(EROFS)
            default: break
            }
        }
        let text = nsError.localizedDescription
        // Foundation's fallback text is its domain and number, which says nothing to a person.
        return text.contains("ErrorDomain") ? "the file could not be read or written" : text
    }

    private static func posix(_ code: Int32) -> String {
        String(cString: strerror(code)).lowercased()
    }
}
