export declare const glyphToSvg: (maxGlyphs: number) => Record<string, (stackedNumber: number) => string>;
export declare const analysisGlyphs: (maxGlyphs: number) => Record<string, (stackedNumber: number) => string>;
export type EndgameOutcome = 'win' | 'mate' | 'resign' | 'abandoned' | 'outoftime' | 'unknown' | 'draw' | 'stalemate';
export declare const endgameGlyphs: (maxGlyphs: number) => Record<EndgameOutcome, (stackedNumber: number) => string>;
