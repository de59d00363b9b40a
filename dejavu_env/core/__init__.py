"""What both games share: raster drawing for rgb_array rendering and option validation."""
