// The plugin's entry: the code is the hookbus package's, so the plugin and the package upgrade together.
export { default } from "hookbus/openclaw";
