// Stand-in `CoreMedia` module: exactly the CoreMedia API that Sources/GlassesRelay/Adapter/
// RelayFrameAdapter+CoreMedia.swift uses, each declaration copied from Apple's documentation
// (https://developer.apple.com/documentation/coremedia/…, the page named beside it). Bodies only trap: type-checking
// on Linux only. Built by AppleSurfaceTests.
import CoreVideo
import Foundation

// MARK: What CoreMedia's headers bring from CoreFoundation and MacTypes (Linux's Foundation does not export them)

/// …/corefoundation/cfstring: "class CFString", "toll-free bridged with its Foundation counterpart, NSString"
/// (declared as that counterpart so `[CFString: Any]` casts type-check as they do on Apple's platforms).
public typealias CFString = NSString
/// …/corefoundation/cfarray: "class CFArray", toll-free bridged with NSArray (see CFString).
public typealias CFArray = NSArray
/// …/kernel/osstatus: "typealias OSStatus = Int32".
public typealias OSStatus = Int32
/// MacTypes' `noErr` (0), as Swift code on Apple's platforms compares it with an OSStatus (`status == noErr`). No
/// documentation page for it was found to quote: the one declaration here taken from usage, not from a page.
public var noErr: OSStatus { 0 }

// MARK: Time

/// …/coremedia/cmtimevalue: "typealias CMTimeValue = Int64".
public typealias CMTimeValue = Int64

/// …/coremedia/cmtime: "struct CMTime".
public struct CMTime: Sendable {
    /// …/cmtime/value: "var value: CMTimeValue".
    public var value: CMTimeValue
    /// …/cmtime/isvalid: "var isValid: Bool { get }".
    public var isValid: Bool { fatalError("surface only") }
}

/// …/coremedia/cmtimeroundingmethod: "enum CMTimeRoundingMethod"; `.default` is "roundHalfAwayFromZero".
public enum CMTimeRoundingMethod: UInt32, Sendable {
    case roundHalfAwayFromZero = 1
    public static var `default`: CMTimeRoundingMethod { .roundHalfAwayFromZero }
}

/// …/coremedia/cmtimeconvertscale(_:timescale:method:): "func CMTimeConvertScale(_ time: CMTime, timescale: Int32,
/// method: CMTimeRoundingMethod) -> CMTime".
public func CMTimeConvertScale(_ time: CMTime, timescale: Int32, method: CMTimeRoundingMethod) -> CMTime {
    fatalError("surface only")
}

// MARK: Sample, block and format buffers

/// …/coremedia/cmsamplebuffer: "class CMSampleBuffer".
public final class CMSampleBuffer: @unchecked Sendable {}
/// …/coremedia/cmblockbuffer: "class CMBlockBuffer".
public final class CMBlockBuffer {}
/// …/coremedia/cmformatdescription: "class CMFormatDescription".
public final class CMFormatDescription {}
/// …/coremedia/cmvideoformatdescription: "typealias CMVideoFormatDescription = CMFormatDescription".
public typealias CMVideoFormatDescription = CMFormatDescription

/// …/coremedia/cmsamplebuffergetpresentationtimestamp(_:): "func CMSampleBufferGetPresentationTimeStamp(_ sbuf:
/// CMSampleBuffer) -> CMTime".
public func CMSampleBufferGetPresentationTimeStamp(_ sbuf: CMSampleBuffer) -> CMTime { fatalError("surface only") }

/// …/coremedia/cmsamplebuffergetimagebuffer(_:): "func CMSampleBufferGetImageBuffer(_ sbuf: CMSampleBuffer) ->
/// CVImageBuffer?".
public func CMSampleBufferGetImageBuffer(_ sbuf: CMSampleBuffer) -> CVImageBuffer? { fatalError("surface only") }

/// …/coremedia/cmsamplebuffergetdatabuffer(_:): "func CMSampleBufferGetDataBuffer(_ sbuf: CMSampleBuffer) ->
/// CMBlockBuffer?".
public func CMSampleBufferGetDataBuffer(_ sbuf: CMSampleBuffer) -> CMBlockBuffer? { fatalError("surface only") }

/// …/coremedia/cmsamplebuffergetformatdescription(_:): "func CMSampleBufferGetFormatDescription(_ sbuf:
/// CMSampleBuffer) -> CMFormatDescription?".
public func CMSampleBufferGetFormatDescription(_ sbuf: CMSampleBuffer) -> CMFormatDescription? {
    fatalError("surface only")
}

/// …/coremedia/cmsamplebuffergetsampleattachmentsarray(_:createifnecessary:): "func
/// CMSampleBufferGetSampleAttachmentsArray(_ sbuf: CMSampleBuffer, createIfNecessary: Bool) -> CFArray?".
public func CMSampleBufferGetSampleAttachmentsArray(_ sbuf: CMSampleBuffer, createIfNecessary: Bool) -> CFArray? {
    fatalError("surface only")
}

/// …/coremedia/kcmsampleattachmentkey_notsync: "let kCMSampleAttachmentKey_NotSync: CFString".
public var kCMSampleAttachmentKey_NotSync: CFString { fatalError("surface only") }

/// …/coremedia/cmblockbuffergetdatalength(_:): "func CMBlockBufferGetDataLength(_ theBuffer: CMBlockBuffer) -> Int".
public func CMBlockBufferGetDataLength(_ theBuffer: CMBlockBuffer) -> Int { fatalError("surface only") }

/// …/coremedia/cmblockbuffercopydatabytes(_:atoffset:datalength:destination:): "func CMBlockBufferCopyDataBytes(_
/// theSourceBuffer: CMBlockBuffer, atOffset offsetToData: Int, dataLength: Int, destination: UnsafeMutableRawPointer)
/// -> OSStatus".
public func CMBlockBufferCopyDataBytes(
    _ theSourceBuffer: CMBlockBuffer, atOffset offsetToData: Int, dataLength: Int,
    destination: UnsafeMutableRawPointer
) -> OSStatus { fatalError("surface only") }

/// …/coremedia/kcmblockbuffernoerr: "var kCMBlockBufferNoErr: OSStatus { get }".
public var kCMBlockBufferNoErr: OSStatus { 0 }

/// …/coremedia/cmvideoformatdescriptiongethevcparametersetatindex(_:parametersetindex:parametersetpointerout:
/// parametersetsizeout:parametersetcountout:nalunitheaderlengthout:): "func
/// CMVideoFormatDescriptionGetHEVCParameterSetAtIndex(_ videoDesc: CMFormatDescription, parameterSetIndex: Int,
/// parameterSetPointerOut: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, parameterSetSizeOut:
/// UnsafeMutablePointer<Int>?, parameterSetCountOut: UnsafeMutablePointer<Int>?, nalUnitHeaderLengthOut:
/// UnsafeMutablePointer<Int32>?) -> OSStatus".
public func CMVideoFormatDescriptionGetHEVCParameterSetAtIndex(
    _ videoDesc: CMFormatDescription, parameterSetIndex: Int,
    parameterSetPointerOut: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
    parameterSetSizeOut: UnsafeMutablePointer<Int>?, parameterSetCountOut: UnsafeMutablePointer<Int>?,
    nalUnitHeaderLengthOut: UnsafeMutablePointer<Int32>?
) -> OSStatus { fatalError("surface only") }

/// …/coremedia/cmvideodimensions: "struct CMVideoDimensions" with "var width: Int32" and "var height: Int32".
public struct CMVideoDimensions: Sendable {
    public var width: Int32
    public var height: Int32
}

/// …/coremedia/cmvideoformatdescriptiongetdimensions(_:): "func CMVideoFormatDescriptionGetDimensions(_ videoDesc:
/// CMVideoFormatDescription) -> CMVideoDimensions".
public func CMVideoFormatDescriptionGetDimensions(_ videoDesc: CMVideoFormatDescription) -> CMVideoDimensions {
    fatalError("surface only")
}
