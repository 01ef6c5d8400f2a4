// The POSIX layer re-exports the portable core, so that code that opens links over sockets (the bridge, the
// simulator, `glasses-relay`) names `LinkAddress`, `LinkFrame`, `InProcessLink` and the rest with one import, as
// before the split. Code that must stay portable (the relay core) imports `GlassesLinkCore` alone.
@_exported import GlassesLinkCore
