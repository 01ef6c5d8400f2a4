// The frame types (`VideoFrame`, `RawVideoImage`, `HEVCSample`, `HEVCCodecConfiguration`) live in GlassesMedia,
// the leaf module every layer shares; WearablesKit re-exports them so DAT code sees them where DAT puts them.
@_exported import GlassesMedia
