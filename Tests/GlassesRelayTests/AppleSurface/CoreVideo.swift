// Stand-in `CoreVideo` module: exactly the CoreVideo API that Sources/GlassesRelay/Adapter/
// RelayFrameAdapter+CoreMedia.swift uses, each declaration copied from Apple's documentation
// (https://developer.apple.com/documentation/corevideo/…, the page named beside it). Bodies only trap: type-checking
// on Linux only. Built by AppleSurfaceTests.
import Foundation

/// …/corevideo/cvbuffer: "class CVBuffer" (the base of image and pixel buffers).
public class CVBuffer {}
/// …/corevideo/cvimagebuffer: "typealias CVImageBuffer = CVBuffer".
public typealias CVImageBuffer = CVBuffer
/// …/corevideo/cvpixelbuffer: "typealias CVPixelBuffer = CVImageBuffer".
public typealias CVPixelBuffer = CVImageBuffer
/// …/corevideo/cvreturn: "typealias CVReturn = Int32".
public typealias CVReturn = Int32

/// …/corevideo/cvpixelbufferlockflags: "struct CVPixelBufferLockFlags" (an OptionSet of CVOptionFlags).
public struct CVPixelBufferLockFlags: OptionSet, Sendable {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    /// …/cvpixelbufferlockflags/readonly: "static var readOnly: CVPixelBufferLockFlags { get }".
    public static var readOnly: CVPixelBufferLockFlags { fatalError("surface only") }
}

/// …/corevideo/cvpixelbuffergetplanecount(_:): "func CVPixelBufferGetPlaneCount(_ pixelBuffer: CVPixelBuffer) -> Int".
public func CVPixelBufferGetPlaneCount(_ pixelBuffer: CVPixelBuffer) -> Int { fatalError("surface only") }

/// …/corevideo/cvpixelbufferlockbaseaddress(_:_:): "func CVPixelBufferLockBaseAddress(_ pixelBuffer: CVPixelBuffer,
/// _ lockFlags: CVPixelBufferLockFlags) -> CVReturn" (a C function: its result may be ignored).
@discardableResult
public func CVPixelBufferLockBaseAddress(_ pixelBuffer: CVPixelBuffer, _ lockFlags: CVPixelBufferLockFlags) -> CVReturn {
    fatalError("surface only")
}

/// …/corevideo/cvpixelbufferunlockbaseaddress(_:_:): "func CVPixelBufferUnlockBaseAddress(_ pixelBuffer:
/// CVPixelBuffer, _ unlockFlags: CVPixelBufferLockFlags) -> CVReturn".
@discardableResult
public func CVPixelBufferUnlockBaseAddress(_ pixelBuffer: CVPixelBuffer, _ unlockFlags: CVPixelBufferLockFlags)
    -> CVReturn
{ fatalError("surface only") }

/// …/corevideo/cvpixelbuffergetwidth(_:): "func CVPixelBufferGetWidth(_ pixelBuffer: CVPixelBuffer) -> Int".
public func CVPixelBufferGetWidth(_ pixelBuffer: CVPixelBuffer) -> Int { fatalError("surface only") }

/// …/corevideo/cvpixelbuffergetheight(_:): "func CVPixelBufferGetHeight(_ pixelBuffer: CVPixelBuffer) -> Int".
public func CVPixelBufferGetHeight(_ pixelBuffer: CVPixelBuffer) -> Int { fatalError("surface only") }

/// …/corevideo/cvpixelbuffergetbaseaddressofplane(_:_:): "func CVPixelBufferGetBaseAddressOfPlane(_ pixelBuffer:
/// CVPixelBuffer, _ planeIndex: Int) -> UnsafeMutableRawPointer?".
public func CVPixelBufferGetBaseAddressOfPlane(_ pixelBuffer: CVPixelBuffer, _ planeIndex: Int)
    -> UnsafeMutableRawPointer?
{ fatalError("surface only") }

/// …/corevideo/cvpixelbuffergetbytesperrowofplane(_:_:): "func CVPixelBufferGetBytesPerRowOfPlane(_ pixelBuffer:
/// CVPixelBuffer, _ planeIndex: Int) -> Int".
public func CVPixelBufferGetBytesPerRowOfPlane(_ pixelBuffer: CVPixelBuffer, _ planeIndex: Int) -> Int {
    fatalError("surface only")
}

/// …/corevideo/cvpixelbuffergetheightofplane(_:_:): "func CVPixelBufferGetHeightOfPlane(_ pixelBuffer:
/// CVPixelBuffer, _ planeIndex: Int) -> Int".
public func CVPixelBufferGetHeightOfPlane(_ pixelBuffer: CVPixelBuffer, _ planeIndex: Int) -> Int {
    fatalError("surface only")
}
