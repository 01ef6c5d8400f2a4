// Type-checked on Linux against a stand-in SwiftUI (AppleSurfaceTests); never compiled against Apple's SDK (see
// ../README.md). The iOS app's entry point. No logic: it shows ContentView.
import SwiftUI

@main
struct GlassesRelayApp: App {
    @State private var model = RelayAppModel()

    var body: some Scene {
        WindowGroup {
            ContentView(model: model)
                .onOpenURL { url in model.handle(url) }
        }
    }
}
