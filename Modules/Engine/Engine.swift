// Engine
