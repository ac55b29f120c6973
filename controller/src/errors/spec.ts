/** One catalogue entry: status, default message, and what it means for the operator. */
export interface ErrorSpec {
  status: number;
  message: string;
  doc: string;
}
