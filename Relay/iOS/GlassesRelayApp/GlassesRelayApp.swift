// NOT COMPILED HERE (see ../README.md): the iOS app's entry point. No logic: it shows ContentView.
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
