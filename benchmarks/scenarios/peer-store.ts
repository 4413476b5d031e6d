/**
 * The data behind the peer scenarios, shared by every framework measured there: each
 * calls the same three methods, so the frameworks differ only in their own work.
 */

/** The item of the peer scenarios: the shape of a typical API row, a date-time field included. */
export interface PeerItem { id: number, name: string, price: number, tags: string[], updated_at: string }

/** The body of a create. */
export interface PeerItemInput { name: string, price: number, tags: string[] }

/** What each implementation of the peer endpoints calls. */
export interface PeerStore {
  list (): Promise<PeerItem[]>
  get (id: number): Promise<PeerItem | null>
  /** Returns the created item without keeping it, so a long run does not grow the heap. */
  create (values: PeerItemInput): Promise<PeerItem>
}
