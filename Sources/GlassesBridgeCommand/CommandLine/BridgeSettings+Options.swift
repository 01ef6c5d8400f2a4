import GlassesBridge
import WearablesKit

extension BridgeSettings {
    /// The settings a parsed command line asks for.
    /// - Throws: ``BridgeFailure`` (internal) if the options hold an unsupported frame rate.
    package init(options: BridgeOptions) throws(BridgeFailure) {
        let configuration: StreamConfiguration
        do {
            configuration = try options.makeStreamConfiguration()
        } catch {
            throw BridgeFailure(.internalError, error.description)
        }
        self.init(streamConfiguration: configuration)
        pixelFormat = options.pixelFormat
        transform = options.transform
        metrics = options.metrics
        duration = options.duration.map { .milliseconds(Int64(($0 * 1000).rounded())) }
        recordPath = options.recordPath
        videoOutPath = options.videoOutPath
        motion = options.motion
    }
}
